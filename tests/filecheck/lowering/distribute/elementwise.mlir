// distribute-fragments, family 1 (scalars and elementwise): one ptx.alu per op,
// its elements the registers a thread holds (a 128x64 f32 tile over two
// consumer warpgroups: 32). A splat is its scalar, read by every element; a
// splat constant is an immediate, moved into a register where PTX wants one
// (the first source); a broadcast row or column is a map on the reader; iota is
// the thread's row (column) base plus a constant bundle of offsets; truncf
// packs pairs (odd element first), extf unpacks them. Divisions by powers of
// two are shifts. Parameters are ptx.param reads, declared on the kernel.
// RUN: tawa-opt %s -p distribute-fragments | filecheck %s
// RUN: tawa-opt %s -p distribute-fragments --print-op-generic | tawa-opt | filecheck %s

// CHECK-LABEL: func.func @elementwise() attributes {
// CHECK-SAME:    ptx.params = [#ptx.param_decl<"p_scale" : f32>, #ptx.param_decl<"p_n" : u32>]
// CHECK-DAG:     %[[ROWOFF:.*]] = ptx.imm() {value = array<i64: 0, 8>} : () -> !ptx.imm<b32 x 2>
// CHECK-DAG:     %[[COLOFF:.*]] = ptx.imm() {value = array<i64: 0, 1, 8, 9, 16, 17, 24, 25, 32, 33, 40, 41, 48, 49, 56, 57>} : () -> !ptx.imm<b32 x 16>
// CHECK-DAG:     %[[NINF:.*]] = ptx.imm() {value = 0xff800000 : f32} : () -> !ptx.imm<f32>
// CHECK-DAG:     %[[ONE:.*]] = ptx.imm() {value = 1.000000e+00 : f32} : () -> !ptx.imm<f32>
// CHECK-DAG:     %[[LOG2E:.*]] = ptx.imm() {value = 1.44269502 : f32} : () -> !ptx.imm<f32>
// CHECK:         %[[SCALE:.*]] = ptx.param() {param = "p_scale"} : () -> !ptx.reg<f32>
// CHECK-NEXT:    %[[N:.*]] = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
// CHECK:         } else {
// row base: band + 16 w + g
// CHECK:         %[[BAND:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "mul.lo.u32"}
// CHECK-NEXT:    %[[WARP:.*]] = ptx.alu(%{{.*}}, %{{.*}}, %[[BAND]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:    %[[ROW0:.*]] = ptx.alu(%[[WARP]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:    %[[Q:.*]] = ptx.alu(%[[N]], %{{.*}}) {opcode = "shr.u32"}
// CHECK-NEXT:    %[[R:.*]] = ptx.alu(%[[N]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:    %[[M:.*]] = ptx.alu(%[[Q]], %[[R]]) {opcode = "mul.lo.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
// CHECK-NEXT:    %[[ROWS:.*]] = ptx.alu(%[[ROW0]], %[[ROWOFF]]) {opcode = "add.u32"} : (!ptx.reg<b32>, !ptx.imm<b32 x 2>) -> !ptx.reg<b32 x 2>
// CHECK-NEXT:    %[[COLS:.*]] = ptx.alu(%{{.*}}, %[[COLOFF]]) {opcode = "add.u32"} : (!ptx.reg<b32>, !ptx.imm<b32 x 16>) -> !ptx.reg<b32 x 16>
// CHECK-NEXT:    %[[MASK:.*]] = ptx.alu(%[[ROWS]], %[[COLS]]) {opcode = "setp.ge.s32", maps = [array<i32: 0, 0, 1, 1, 0, 0, 1, 1, {{.*}}>, array<i32: 0, 1, 0, 1, 2, 3, 2, 3, {{.*}}>]} : (!ptx.reg<b32 x 2>, !ptx.reg<b32 x 16>) -> !ptx.reg<pred x 32>
// CHECK-NEXT:    %[[X:.*]] = ptx.alu(%[[SCALE]], %[[NINF]], %[[MASK]]) {opcode = "selp.f32"} : (!ptx.reg<f32>, !ptx.imm<f32>, !ptx.reg<pred x 32>) -> !ptx.reg<f32 x 32>
// CHECK-NEXT:    %[[ONER:.*]] = ptx.alu(%[[ONE]]) {opcode = "mov.f32"} : (!ptx.imm<f32>) -> !ptx.reg<f32>
// CHECK-NEXT:    %[[SUM:.*]] = ptx.alu(%[[ONER]], %[[X]]) {opcode = "add.f32"} : (!ptx.reg<f32>, !ptx.reg<f32 x 32>) -> !ptx.reg<f32 x 32>
// CHECK-NEXT:    %[[PROD:.*]] = ptx.alu(%[[SUM]], %[[SCALE]]) {opcode = "mul.f32"} : (!ptx.reg<f32 x 32>, !ptx.reg<f32>) -> !ptx.reg<f32 x 32>
// CHECK-NEXT:    %[[T:.*]] = ptx.alu(%[[PROD]], %[[LOG2E]]) {opcode = "mul.f32"}
// CHECK-NEXT:    %[[E:.*]] = ptx.alu(%[[T]]) {opcode = "ex2.approx.ftz.f32"} : (!ptx.reg<f32 x 32>) -> !ptx.reg<f32 x 32>
// CHECK-NEXT:    %[[P:.*]] = ptx.alu(%[[E]], %[[E]]) {opcode = "cvt.rn.bf16x2.f32", maps = [array<i32: 1, 3, 5, {{.*}}, 31>, array<i32: 0, 2, 4, {{.*}}, 30>]} : (!ptx.reg<f32 x 32>, !ptx.reg<f32 x 32>) -> !ptx.reg<b32 x 16>
// CHECK-NEXT:    %[[HALVES:.*]] = ptx.unpack(%[[P]]) : (!ptx.reg<b32 x 16>) -> !ptx.reg<b16 x 32>
// CHECK-NEXT:    %[[BACK:.*]] = ptx.alu(%[[HALVES]]) {opcode = "cvt.f32.bf16"} : (!ptx.reg<b16 x 32>) -> !ptx.reg<f32 x 32>
// CHECK-NEXT:    ptx.alu(%[[BACK]], %[[NINF]], %[[MASK]]) {opcode = "selp.f32"}
// CHECK-NEXT:    %[[MF:.*]] = ptx.alu(%[[M]]) {opcode = "cvt.rn.f32.s32"} : (!ptx.reg<b32>) -> !ptx.reg<f32>
// CHECK-NEXT:    %[[LG:.*]] = ptx.alu(%[[MF]]) {opcode = "lg2.approx.f32"}
// CHECK-NEXT:    ptx.alu(%[[LG]], %{{.*}}) {opcode = "mul.f32"} : (!ptx.reg<f32>, !ptx.imm<f32>) -> !ptx.reg<f32>
// CHECK-NEXT:  }
// CHECK-NEXT:  func.return
func.func @elementwise(%scale: f32, %n: index) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>, #nvgpu_async.param<scalar 1 : index>], nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 2 producer {
  } consumer {
    %c4 = arith.constant 4 : index
    %q = arith.divui %n, %c4 : index
    %r = arith.remui %n, %c4 : index
    %m = arith.muli %q, %r : index
    %rows = tile.iota : tensor<128xi32, #nvgpu_async.frag<row, warpgroups = 2>>
    %cols = tile.iota : tensor<64xi32, #nvgpu_async.frag<col, warpgroups = 2>>
    %rows2 = tile.expand_dims %rows, axis = 1 : tensor<128xi32, #nvgpu_async.frag<row, warpgroups = 2>> -> tensor<128x1xi32, #nvgpu_async.frag<row, warpgroups = 2>>
    %cols2 = tile.expand_dims %cols, axis = 0 : tensor<64xi32, #nvgpu_async.frag<col, warpgroups = 2>> -> tensor<1x64xi32, #nvgpu_async.frag<col, warpgroups = 2>>
    %rb = tile.broadcast %rows2 : tensor<128x1xi32, #nvgpu_async.frag<row, warpgroups = 2>> -> tensor<128x64xi32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %cb = tile.broadcast %cols2 : tensor<1x64xi32, #nvgpu_async.frag<col, warpgroups = 2>> -> tensor<128x64xi32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %mask = tile.cmpi sge, %rb, %cb : tensor<128x64xi32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x64xi1, #nvgpu_async.frag<acc, warpgroups = 2>>
    %s = tile.splat %scale : f32 -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %ninf = arith.constant 0xff800000 : f32
    %neg = tile.splat %ninf : f32 -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %x = tile.select %mask, %s, %neg : tensor<128x64xi1, #nvgpu_async.frag<acc, warpgroups = 2>>, tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %one = arith.constant dense<1.000000e+00> : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %sum = arith.addf %one, %x : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %prod = arith.mulf %sum, %s : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %e = math.exp %prod : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %p = arith.truncf %e : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>> to tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>
    %back = arith.extf %p : tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 2>> to tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %masked = tile.select %mask, %back, %neg : tensor<128x64xi1, #nvgpu_async.frag<acc, warpgroups = 2>>, tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %lg = math.log %mf : f32
  }
  func.return
}

// tile.cmpf is one setp.<cmp>.f32 per element (ogt -> gt, ult -> ltu: true where
// either side is NaN), a literal left side moved into a register once; tile.fptosi
// and tile.fptoui are cvt.rzi (towards zero, saturating, NaN to 0).
// CHECK-LABEL: func.func @float_compares()
// CHECK-DAG:     %[[ZERO:.*]] = ptx.imm() {value = 0.000000e+00 : f32} : () -> !ptx.imm<f32>
// CHECK:         %[[F:.*]] = ptx.alu(%{{.*}}) {opcode = "cvt.rn.f32.s32"{{.*}}} : (!ptx.reg<b32 x 2>) -> !ptx.reg<f32 x 32>
// CHECK-NEXT:    %[[POS:.*]] = ptx.alu(%[[F]], %[[ZERO]]) {opcode = "setp.gt.f32"} : (!ptx.reg<f32 x 32>, !ptx.imm<f32>) -> !ptx.reg<pred x 32>
// CHECK-NEXT:    %[[ZR:.*]] = ptx.alu(%[[ZERO]]) {opcode = "mov.f32"} : (!ptx.imm<f32>) -> !ptx.reg<f32>
// CHECK-NEXT:    %[[NEG:.*]] = ptx.alu(%[[ZR]], %[[F]]) {opcode = "setp.ltu.f32"} : (!ptx.reg<f32>, !ptx.reg<f32 x 32>) -> !ptx.reg<pred x 32>
// CHECK-NEXT:    ptx.alu(%[[F]], %[[ZERO]], %[[POS]]) {opcode = "selp.f32"}
// CHECK-NEXT:    ptx.alu(%[[F]]) {opcode = "cvt.rzi.s32.f32"} : (!ptx.reg<f32 x 32>) -> !ptx.reg<b32 x 32>
// CHECK-NEXT:    ptx.alu(%[[F]]) {opcode = "cvt.rzi.u32.f32"} : (!ptx.reg<f32 x 32>) -> !ptx.reg<b32 x 32>
// CHECK-NEXT:  }
func.func @float_compares() attributes {tile.kernel, nvgpu_async.abi = [], nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 2 producer {
  } consumer {
    %rows = tile.iota : tensor<128xi32, #nvgpu_async.frag<row, warpgroups = 2>>
    %rows2 = tile.expand_dims %rows, axis = 1 : tensor<128xi32, #nvgpu_async.frag<row, warpgroups = 2>> -> tensor<128x1xi32, #nvgpu_async.frag<row, warpgroups = 2>>
    %rb = tile.broadcast %rows2 : tensor<128x1xi32, #nvgpu_async.frag<row, warpgroups = 2>> -> tensor<128x64xi32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %f = tile.sitofp %rb : tensor<128x64xi32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %pos = tile.cmpf ogt, %f, %zero : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x64xi1, #nvgpu_async.frag<acc, warpgroups = 2>>
    %neg = tile.cmpf ult, %zero, %f : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x64xi1, #nvgpu_async.frag<acc, warpgroups = 2>>
    %relu = tile.select %pos, %f, %zero : tensor<128x64xi1, #nvgpu_async.frag<acc, warpgroups = 2>>, tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %i = tile.fptosi %f : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x64xi32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %u = tile.fptoui %f : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x64xi32, #nvgpu_async.frag<acc, warpgroups = 2>>
  }
  func.return
}

// tile.cmpf of 16-bit tiles widens both sides to f32 first (exact: each pair
// unpacked, each half converted; a splat constant's pair register its low half,
// once), then one setp.<cmp>.f32 per element.
// CHECK-LABEL: func.func @half_compares()
// CHECK:         %[[H:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "cvt.rn.bf16x2.f32"{{.*}}} : (!ptx.reg<f32 x 32>, !ptx.reg<f32 x 32>) -> !ptx.reg<b32 x 16>
// CHECK-NEXT:    %[[G:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "cvt.rn.f16x2.f32"{{.*}}} : (!ptx.reg<f32 x 32>, !ptx.reg<f32 x 32>) -> !ptx.reg<b32 x 16>
// CHECK-NEXT:    %{{.*}} = ptx.alu(%{{.*}}) {opcode = "mov.f32"}
// CHECK-NEXT:    %[[ZP:.*]] = ptx.alu(%[[Z:.*]], %[[Z]]) {opcode = "cvt.rn.f16x2.f32"} : (!ptx.reg<f32>, !ptx.reg<f32>) -> !ptx.reg<b32>
// CHECK-NEXT:    %[[HH:.*]] = ptx.unpack(%[[H]]) : (!ptx.reg<b32 x 16>) -> !ptx.reg<b16 x 32>
// CHECK-NEXT:    %[[HF:.*]] = ptx.alu(%[[HH]]) {opcode = "cvt.f32.bf16"} : (!ptx.reg<b16 x 32>) -> !ptx.reg<f32 x 32>
// CHECK-NEXT:    ptx.alu(%[[HF]], %[[HF]]) {opcode = "setp.nan.f32"} : (!ptx.reg<f32 x 32>, !ptx.reg<f32 x 32>) -> !ptx.reg<pred x 32>
// CHECK-NEXT:    %[[ZH:.*]] = ptx.unpack(%[[ZP]]) : (!ptx.reg<b32>) -> !ptx.reg<b16 x 2>
// CHECK-NEXT:    %[[ZF:.*]] = ptx.alu(%[[ZH]]) {opcode = "cvt.f32.f16", maps = [array<i32: 0>]} : (!ptx.reg<b16 x 2>) -> !ptx.reg<f32>
// CHECK-NEXT:    %[[GH:.*]] = ptx.unpack(%[[G]]) : (!ptx.reg<b32 x 16>) -> !ptx.reg<b16 x 32>
// CHECK-NEXT:    %[[GF:.*]] = ptx.alu(%[[GH]]) {opcode = "cvt.f32.f16"} : (!ptx.reg<b16 x 32>) -> !ptx.reg<f32 x 32>
// CHECK-NEXT:    ptx.alu(%[[ZF]], %[[GF]]) {opcode = "setp.lt.f32"} : (!ptx.reg<f32>, !ptx.reg<f32 x 32>) -> !ptx.reg<pred x 32>
// CHECK-NEXT:  }
func.func @half_compares() attributes {tile.kernel, nvgpu_async.abi = [], nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 2 producer {
  } consumer {
    %rows = tile.iota : tensor<128xi32, #nvgpu_async.frag<row, warpgroups = 2>>
    %rows2 = tile.expand_dims %rows, axis = 1 : tensor<128xi32, #nvgpu_async.frag<row, warpgroups = 2>> -> tensor<128x1xi32, #nvgpu_async.frag<row, warpgroups = 2>>
    %rb = tile.broadcast %rows2 : tensor<128x1xi32, #nvgpu_async.frag<row, warpgroups = 2>> -> tensor<128x64xi32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %f = tile.sitofp %rb : tensor<128x64xi32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %h = arith.truncf %f : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>> to tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>
    %g = arith.truncf %f : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>> to tensor<128x64xf16, #nvgpu_async.frag<acc, warpgroups = 2>>
    %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf16, #nvgpu_async.frag<acc, warpgroups = 2>>
    %nan = tile.cmpf uno, %h, %h : tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x64xi1, #nvgpu_async.frag<acc, warpgroups = 2>>
    %pos = tile.cmpf olt, %zero, %g : tensor<128x64xf16, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x64xi1, #nvgpu_async.frag<acc, warpgroups = 2>>
  }
  func.return
}
