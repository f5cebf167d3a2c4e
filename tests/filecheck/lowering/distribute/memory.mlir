// distribute-fragments, family 6 (loads and stores): a bias vector is read
// from shared memory by one multi-instruction ld (a v2 per 8-column group) and
// broadcast down the rows by a map; a matrix tile (a residual, a split-K
// partial) is read into the accumulator layout through the swizzle TMA wrote
// (one address per 8-column group, chunk c ^ g; one ld per element pair, in
// register order: 32 bits per bf16 pair, v2 per f32 pair; the next 64-row
// block 8192 bytes on, the next 128-byte column chunk a whole chunk of rows
// on); smem_store writes each element pair into
// the 128-byte-swizzled staging tile (one address per 8-column group, chunk
// c ^ g); store_global branches uniformly between the paths select-store-path
// listed: 16-byte vectors after a quad transpose (two rounds of selp, shuffle,
// selp per 16-byte group), pairs (masked, the half-inside pair storing
// its first element alone), single elements. Each store instruction reads its
// address and guard elements from bundles computed for four 8-column groups of a
// row at a time (their stores right after), and a 16-byte group is stored right
// after its transpose.
// RUN: tawa-opt %s -p distribute-fragments | filecheck %s

// CHECK-LABEL: func.func @stores()
// CHECK-SAME:    ptx.params = [#ptx.param_decl<"p_c_ptr" : u64>, #ptx.param_decl<"p_c_dim0" : u32>, #ptx.param_decl<"p_c_dim1" : u32>, #ptx.param_decl<"p_c_dim2" : u32>, #ptx.param_decl<"p_c_stride0" : u32>, #ptx.param_decl<"p_c_stride1" : u32>, #ptx.param_decl<"p_d_ptr" : u64>, #ptx.param_decl<"p_d_dim0" : u32>, #ptx.param_decl<"p_d_dim1" : u32>, #ptx.param_decl<"p_d_stride0" : u32>, #ptx.param_decl<"p_i" : u32>, #ptx.param_decl<"p_x" : f32>]
// CHECK:         %[[CPTR:.*]] = ptx.param() {param = "p_c_ptr"} : () -> !ptx.reg<b64>
// CHECK:         %[[CGLOBAL:.*]] = ptx.alu(%[[CPTR]]) {opcode = "cvta.to.global.u64"} : (!ptx.reg<b64>) -> !ptx.reg<b64>
// CHECK:         %[[I:.*]] = ptx.param() {param = "p_i"} : () -> !ptx.reg<b32>
// CHECK:         %[[X:.*]] = ptx.param() {param = "p_x"} : () -> !ptx.reg<f32>
// CHECK:         } else {
// bias: 4 elements per thread, two v2 loads 32 bytes apart
// CHECK:         %[[BIAS:.*]] = ptx.ld(%{{.*}}) {space = "shared", offset = 0 : i64, offsets = array<i64: 0, 32>} : (!ptx.reg<b32>) -> !ptx.reg<f32 x 4>
// CHECK-NEXT:    %[[Y:.*]] = ptx.alu(%[[X]], %[[BIAS]]) {opcode = "add.f32", maps = [array<i32>, array<i32: 0, 1, 0, 1, 2, 3, 2, 3>]} : (!ptx.reg<f32>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 8>
// an f32 tile: pairs or single elements
// CHECK-NEXT:    %[[OFF:.*]] = ptx.alu(%{{.*}}) {opcode = "mov.u64"}
// CHECK:         %[[ROW0:.*]] = ptx.alu(%[[I]], %{{.*}}) {opcode = "add.s32"}
// the pair path needs the column, the row pitch and the base (in elements) even
// CHECK-NEXT:    %[[BITS:.*]] = ptx.alu(%[[I]], %{{.*}}) {opcode = "or.b32"}
// CHECK-NEXT:    %[[BASE:.*]] = ptx.alu(%{{.*}}) {opcode = "cvt.u32.u64"}
// CHECK-NEXT:    %[[ELEM:.*]] = ptx.alu(%[[BASE]], %{{.*}}) {opcode = "shr.u32"}
// CHECK-NEXT:    %[[ALL:.*]] = ptx.alu(%[[BITS]], %[[ELEM]]) {opcode = "or.b32"}
// CHECK-NEXT:    %[[LOW:.*]] = ptx.alu(%[[ALL]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:    %[[ODD:.*]] = ptx.alu(%[[LOW]], %{{.*}}) {opcode = "setp.ne.u32"}
// CHECK-NEXT:    ptx.if uniform %[[ODD]] : !ptx.reg<pred> {
// CHECK:           %[[P0:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "and.pred", maps = [array<i32>, array<i32: 0, 0>]}
// CHECK-NEXT:      %{{.*}} = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "setp.lt.u32"}
// CHECK-NEXT:      %[[P1:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "and.pred", maps = [array<i32>, array<i32: 0, 0>]}
// CHECK-NEXT:      %{{.*}} = ptx.alu(%{{.*}}) {opcode = "cvt.s64.s32"}
// CHECK-NEXT:      %{{.*}} = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "add.s64"
// CHECK-NEXT:      %[[EL:.*]] = ptx.alu(%{{.*}}, %{{.*}}, %{{.*}}) {opcode = "mad.lo.u64"} : (!ptx.reg<b64 x 2>, !ptx.imm<b64>, !ptx.reg<b64>) -> !ptx.reg<b64 x 2>
// CHECK-NEXT:      ptx.st(%[[EL]], %[[Y]]) if %[[P0]] {space = "global", offset = 0 : i64, offsets = array<i64: 0, 0>, addr_map = array<i32: 0, 1>, value_map = array<i32: 0, 4>}
// CHECK-NEXT:      ptx.st(%[[EL]], %[[Y]]) if %[[P1]] {space = "global", offset = 4 : i64, offsets = array<i64: 0, 0>, addr_map = array<i32: 0, 1>, value_map = array<i32: 1, 5>}
// CHECK:           %[[P2:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "and.pred", maps = [array<i32>, array<i32: 1, 1>]}
// CHECK:           %[[P3:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "and.pred", maps = [array<i32>, array<i32: 1, 1>]}
// CHECK:           %[[EL2:.*]] = ptx.alu(%{{.*}}, %{{.*}}, %{{.*}}) {opcode = "mad.lo.u64"}
// CHECK-NEXT:      ptx.st(%[[EL2]], %[[Y]]) if %[[P2]] {space = "global", offset = 0 : i64, offsets = array<i64: 0, 0>, addr_map = array<i32: 0, 1>, value_map = array<i32: 2, 6>}
// CHECK-NEXT:      ptx.st(%[[EL2]], %[[Y]]) if %[[P3]] {space = "global", offset = 4 : i64, offsets = array<i64: 0, 0>, addr_map = array<i32: 0, 1>, value_map = array<i32: 3, 7>}
// CHECK-NEXT:    } else {
// CHECK:           %[[Q0:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "and.pred", maps
// CHECK:           %[[Q1:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "and.pred", maps
// CHECK:           %[[FIRST:.*]] = ptx.alu(%[[Q0]], %[[Q1]]) {opcode = "xor.pred"}
// CHECK-NEXT:      ptx.st(%{{.*}}, %[[Y]]) if %[[Q1]] {space = "global", offset = 0 : i64, offsets = array<i64: 0, 0>, addr_map = array<i32: 0, 1>, value_map = array<i32: 0, 1, 4, 5>}
// CHECK-NEXT:      ptx.st(%{{.*}}, %[[Y]]) if %[[FIRST]] {space = "global", offset = 0 : i64, offsets = array<i64: 0, 0>, addr_map = array<i32: 0, 1>, value_map = array<i32: 0, 4>}
// CHECK:           ptx.st(%{{.*}}, %[[Y]]) if %{{.*}} {space = "global", offset = 0 : i64, offsets = array<i64: 0, 0>, addr_map = array<i32: 0, 1>, value_map = array<i32: 2, 3, 6, 7>}
// CHECK-NEXT:      ptx.st(%{{.*}}, %[[Y]]) if %{{.*}} {space = "global", offset = 0 : i64, offsets = array<i64: 0, 0>, addr_map = array<i32: 0, 1>, value_map = array<i32: 2, 6>}
// CHECK-NEXT:    }
// CHECK-NEXT:    }
// the staging tile: 8 groups of 8 columns, two rows each
// CHECK:         %[[H:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "cvt.rn.bf16x2.f32"
// CHECK:         %[[BYTE:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "add.u32"} : (!ptx.reg<b32>, !ptx.imm<b32 x 8>) -> !ptx.reg<b32 x 8>
// CHECK-NEXT:    %[[SW1:.*]] = ptx.alu(%[[BYTE]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:    %[[SW2:.*]] = ptx.alu(%[[SW1]], %{{.*}}) {opcode = "xor.b32"}
// CHECK-NEXT:    %[[IN:.*]] = ptx.alu(%[[BYTE]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:    %[[SW3:.*]] = ptx.alu(%[[SW2]], %[[IN]]) {opcode = "add.u32"}
// CHECK-NEXT:    %[[SW:.*]] = ptx.alu(%[[SW3]], %{{.*}}) {opcode = "add.u32"} : (!ptx.reg<b32 x 8>, !ptx.reg<b32>) -> !ptx.reg<b32 x 8>
// CHECK-NEXT:    ptx.st(%[[SW]], %[[H]]) {space = "shared", offset = 0 : i64, offsets = array<i64: 0, 1024, 0, 1024, 0, 1024, 0, 1024, 0, 1024, 0, 1024, 0, 1024, 0, 1024>, addr_map = array<i32: 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7>, value_map = array<i32: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15>}
// a bf16 tile of a 3-D tensor: the leading index checked, then three paths
// CHECK-NEXT:    %[[OFF0:.*]] = ptx.alu(%{{.*}}) {opcode = "mov.u64"}
// CHECK-NEXT:    %[[LEAD:.*]] = ptx.alu(%[[I]], %{{.*}}) {opcode = "setp.lt.u32"}
// CHECK-NEXT:    %[[OK:.*]] = ptx.alu(%{{.*}}, %[[LEAD]]) {opcode = "and.pred"}
// CHECK-NEXT:    %{{.*}} = ptx.alu(%[[I]], %{{.*}}, %[[OFF0]]) {opcode = "mad.wide.u32"}
// CHECK:         %[[FITS:.*]] = ptx.alu(%[[I]], %{{.*}}, %{{.*}}) {opcode = "setp.le.and.s32"}
// CHECK-NEXT:    ptx.if uniform %[[FITS]] : !ptx.reg<pred> {
// CHECK-NEXT:      %[[BITS:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "and.b32"} : (!ptx.reg<b32>, !ptx.imm<b32 x 2>) -> !ptx.reg<b32 x 2>
// CHECK-NEXT:      %[[LANE:.*]] = ptx.alu(%[[BITS]], %{{.*}}) {opcode = "setp.ne.u32", maps = [array<i32: 0, 0, 1, 1>, array<i32>]} : (!ptx.reg<b32 x 2>, !ptx.imm<b32 x 4>) -> !ptx.reg<pred x 4>
// CHECK:           %[[SEND:.*]] = ptx.alu(%[[H]], %[[H]], %[[LANE]]) {opcode = "selp.b32", maps = [array<i32: 0, 2>, array<i32: 4, 6>, array<i32: 0, 0>]}
// CHECK-NEXT:      %[[GOT:.*]] = ptx.shfl_bfly(%[[SEND]]) {lane_mask = 2 : i32}
// CHECK-NEXT:      %[[Y1:.*]] = ptx.alu(%[[GOT]], %[[H]], %[[LANE]]) {opcode = "selp.b32", maps = [array<i32: 0, 1, 0, 1>, array<i32: 0, 2, 4, 6>, array<i32: 0, 0, 1, 1>]}
// CHECK-NEXT:      %[[SEND2:.*]] = ptx.alu(%[[Y1]], %[[Y1]], %[[LANE]]) {opcode = "selp.b32"
// CHECK-NEXT:      %[[GOT2:.*]] = ptx.shfl_bfly(%[[SEND2]]) {lane_mask = 1 : i32}
// CHECK-NEXT:      %[[Y2:.*]] = ptx.alu(%[[GOT2]], %[[Y1]], %[[LANE]]) {opcode = "selp.b32"
// CHECK-NEXT:      ptx.st(%[[VADDR:.*]], %[[Y2]]) if %[[VOK:.*]] {space = "global", offset = 0 : i64, offsets = array<i64: 0>, addr_map = array<i32: 0>, value_map = array<i32: 0, 1, 2, 3>, pred_map = array<i32: 0>}
// CHECK:           ptx.st(%[[VADDR]], %{{.*}}) if %[[VOK]] {space = "global", offset = 0 : i64, offsets = array<i64: 64>, addr_map = array<i32: 0>, value_map = array<i32: 0, 1, 2, 3>, pred_map = array<i32: 0>}
// CHECK:           ptx.st(%[[VADDR]], %{{.*}}) if %[[VOK]] {space = "global", offset = 0 : i64, offsets = array<i64: 0>, addr_map = array<i32: 1>, value_map = array<i32: 0, 1, 2, 3>, pred_map = array<i32: 1>}
// CHECK:           ptx.st(%[[VADDR]], %{{.*}}) if %[[VOK]] {space = "global", offset = 0 : i64, offsets = array<i64: 64>, addr_map = array<i32: 1>, value_map = array<i32: 0, 1, 2, 3>, pred_map = array<i32: 1>}
// CHECK-NEXT:    } else {
// CHECK-NEXT:      ptx.if uniform %{{.*}} : !ptx.reg<pred> {
// CHECK:             %[[PAIRS:.*]] = ptx.alu(%[[H]]) {opcode = "mov.b32", maps = [array<i32: 0, 2, 4, 6>]} : (!ptx.reg<b32 x 16>) -> !ptx.reg<b32 x 4>
// CHECK-NEXT:        %[[HALVES:.*]] = ptx.unpack(%[[PAIRS]]) : (!ptx.reg<b32 x 4>) -> !ptx.reg<b16 x 8>
// CHECK-NEXT:        ptx.st(%{{.*}}, %[[HALVES]]) if %{{.*}} {space = "global", offset = 0 : i64, offsets = array<i64: 0, 0, 0, 0>, addr_map = array<i32: 0, 1, 2, 3>, value_map = array<i32: 0, 2, 4, 6>}
// CHECK-NEXT:        ptx.st(%{{.*}}, %[[HALVES]]) if %{{.*}} {space = "global", offset = 2 : i64, offsets = array<i64: 0, 0, 0, 0>, addr_map = array<i32: 0, 1, 2, 3>, value_map = array<i32: 1, 3, 5, 7>}
// CHECK:           } else {
// CHECK:             %{{.*}} = ptx.alu(%[[H]]) {opcode = "mov.b32"
// CHECK-NEXT:        ptx.unpack
// CHECK-NEXT:        %{{.*}} = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "xor.pred"}
// CHECK-NEXT:        ptx.st(%{{.*}}, %[[H]]) if %{{.*}} {space = "global", offset = 0 : i64,
// CHECK-NEXT:        ptx.st(%{{.*}}, %{{.*}}) if %{{.*}} {space = "global", offset = 0 : i64,
// CHECK-NEXT:      }
// CHECK-NEXT:    }
func.func @stores(%c: !nvgpu_async.global<?x?x?xbf16>, %d: !nvgpu_async.global<?x?xf32>, %i: index, %x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<global 0 : !nvgpu_async.global<?x?x?xbf16>>, #nvgpu_async.param<global 1 : !nvgpu_async.global<?x?xf32>>, #nvgpu_async.param<scalar 2 : index>, #nvgpu_async.param<scalar 3 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 10240, cluster = 1>} {
  %staging = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x64x64xbf16>
  %bias = nvgpu_async.smem_alloc offset = 8192 : !nvgpu_async.smem<1x16xf32>
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %c0 = arith.constant 0 : index
    %vbias = nvgpu_async.smem_slot %bias[%c0] : !nvgpu_async.smem<1x16xf32> -> !nvgpu_async.smem_view<16xf32>
    %b = nvgpu_async.smem_load %vbias : !nvgpu_async.smem_view<16xf32> -> tensor<16xf32, #nvgpu_async.frag<col, warpgroups = 1>>
    %b2 = tile.expand_dims %b, axis = 0 : tensor<16xf32, #nvgpu_async.frag<col, warpgroups = 1>> -> tensor<1x16xf32, #nvgpu_async.frag<col, warpgroups = 1>>
    %bb = tile.broadcast %b2 : tensor<1x16xf32, #nvgpu_async.frag<col, warpgroups = 1>> -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %xs = tile.splat %x : f32 -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %y = arith.addf %xs, %bb : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    nvgpu_async.store_global %y, %d[%i, %i] paths ["pair", "single"] : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.global<?x?xf32>
    %xw = tile.splat %x : f32 -> tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %rows = tile.iota : tensor<64xi32, #nvgpu_async.frag<row, warpgroups = 1>>
    %r2 = tile.expand_dims %rows, axis = 1 : tensor<64xi32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64x1xi32, #nvgpu_async.frag<row, warpgroups = 1>>
    %rb = tile.broadcast %r2 : tensor<64x1xi32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64x64xi32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %z = arith.constant dense<0> : tensor<64x64xi32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %top = tile.cmpi eq, %rb, %z : tensor<64x64xi32, #nvgpu_async.frag<acc, warpgroups = 1>> -> tensor<64x64xi1, #nvgpu_async.frag<acc, warpgroups = 1>>
    %m = tile.select %top, %xw, %zero : tensor<64x64xi1, #nvgpu_async.frag<acc, warpgroups = 1>>, tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %h = arith.truncf %m : tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<64x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
    nvgpu_async.smem_store %h, %staging[%c0] : tensor<64x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.smem<1x64x64xbf16>
    nvgpu_async.store_global %h, %c[%i, %i, %i] paths ["vec16", "pair", "single"] : tensor<64x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.global<?x?x?xbf16>
  }
  func.return
}

// A bf16 128x64 residual in one warpgroup (two 64-row blocks: elements 32..63
// at +8192) and an f32 64x64 partial (two 32-column chunks: groups 4..7 at
// +8192, each group 32 bytes, its pair at 8 t within it).
// CHECK-LABEL: func.func @matrix_loads()
// CHECK:         %[[COLS16:.*]] = ptx.imm() {value = array<i64: 0, 16, 32, 48, 64, 80, 96, 112>} : () -> !ptx.imm<b32 x 8>
// CHECK:         %[[COLS32:.*]] = ptx.imm() {value = array<i64: 0, 32, 64, 96, 0, 32, 64, 96>} : () -> !ptx.imm<b32 x 8>
// CHECK:         } else {
// CHECK:         %[[BYTE:.*]] = ptx.alu(%{{.*}}, %[[COLS16]]) {opcode = "add.u32"} : (!ptx.reg<b32>, !ptx.imm<b32 x 8>) -> !ptx.reg<b32 x 8>
// CHECK-NEXT:    %[[PIECE:.*]] = ptx.alu(%[[BYTE]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:    %[[SW:.*]] = ptx.alu(%[[PIECE]], %{{.*}}) {opcode = "xor.b32"} : (!ptx.reg<b32 x 8>, !ptx.reg<b32>) -> !ptx.reg<b32 x 8>
// CHECK-NEXT:    %[[IN:.*]] = ptx.alu(%[[BYTE]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:    %[[SW2:.*]] = ptx.alu(%[[SW]], %[[IN]]) {opcode = "add.u32"}
// CHECK-NEXT:    %[[ADDR:.*]] = ptx.alu(%[[SW2]], %{{.*}}) {opcode = "add.u32"} : (!ptx.reg<b32 x 8>, !ptx.reg<b32>) -> !ptx.reg<b32 x 8>
// CHECK-NEXT:    %{{.*}} = ptx.ld(%[[ADDR]]) {space = "shared", offset = 0 : i64, offsets = array<i64: 0, 1024, 0, 1024, 0, 1024, 0, 1024, 0, 1024, 0, 1024, 0, 1024, 0, 1024, 8192, 9216, 8192, 9216, 8192, 9216, 8192, 9216, 8192, 9216, 8192, 9216, 8192, 9216, 8192, 9216>, addr_map = array<i32: 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7>} : (!ptx.reg<b32 x 8>) -> !ptx.reg<b32 x 32>
// CHECK:         %{{.*}} = ptx.alu(%{{.*}}, %[[COLS32]]) {opcode = "add.u32"} : (!ptx.reg<b32>, !ptx.imm<b32 x 8>) -> !ptx.reg<b32 x 8>
// CHECK:         %[[ADDR32:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "add.u32"} : (!ptx.reg<b32 x 8>, !ptx.reg<b32>) -> !ptx.reg<b32 x 8>
// CHECK-NEXT:    %{{.*}} = ptx.ld(%[[ADDR32]]) {space = "shared", offset = 0 : i64, offsets = array<i64: 0, 1024, 0, 1024, 0, 1024, 0, 1024, 8192, 9216, 8192, 9216, 8192, 9216, 8192, 9216>, addr_map = array<i32: 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7>} : (!ptx.reg<b32 x 8>) -> !ptx.reg<f32 x 32>
// CHECK-NEXT:  }
func.func @matrix_loads() attributes {tile.kernel, nvgpu_async.abi = [], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 34816, cluster = 1>} {
  %res = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x128x64xbf16>
  %part = nvgpu_async.smem_alloc offset = 16384 : !nvgpu_async.smem<1x64x64xf32>
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %c0 = arith.constant 0 : index
    %vres = nvgpu_async.smem_slot %res[%c0] : !nvgpu_async.smem<1x128x64xbf16> -> !nvgpu_async.smem_view<128x64xbf16>
    %r = nvgpu_async.smem_load %vres : !nvgpu_async.smem_view<128x64xbf16> -> tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
    %vpart = nvgpu_async.smem_slot %part[%c0] : !nvgpu_async.smem<1x64x64xf32> -> !nvgpu_async.smem_view<64x64xf32>
    %p = nvgpu_async.smem_load %vpart : !nvgpu_async.smem_view<64x64xf32> -> tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  }
  func.return
}
