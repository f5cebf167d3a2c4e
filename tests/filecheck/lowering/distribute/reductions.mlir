// distribute-fragments, family 2 (reductions and broadcasts): a row reduction
// combines the elements a thread holds of each of its rows pairwise, one
// ptx.alu per tree level over all its rows (a 64x16 tile: 4 per row, so two
// levels; 64x24: 6, an odd level carried over), then the quad exchanges partial
// results with two butterfly shuffles. A broadcast row is a map on its reader,
// no instruction.
// RUN: tawa-opt %s --split-input-file -p distribute-fragments | filecheck %s

// CHECK-LABEL: func.func @reduce_broadcast()
// CHECK:         %[[S:.*]] = ptx.alu(%{{.*}}, %{{.*}}, %{{.*}}) {opcode = "selp.f32"} : (!ptx.reg<f32>, !ptx.imm<f32>, !ptx.reg<pred x 8>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:    %[[M1:.*]] = ptx.alu(%[[S]], %[[S]]) {opcode = "max.NaN.f32", maps = [array<i32: 0, 2, 4, 6>, array<i32: 1, 3, 5, 7>]} : (!ptx.reg<f32 x 8>, !ptx.reg<f32 x 8>) -> !ptx.reg<f32 x 4>
// CHECK-NEXT:    %[[M2:.*]] = ptx.alu(%[[M1]], %[[M1]]) {opcode = "max.NaN.f32", maps = [array<i32: 0, 1>, array<i32: 2, 3>]} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 2>
// CHECK-NEXT:    %[[X1:.*]] = ptx.shfl_bfly(%[[M2]]) {lane_mask = 1 : i32} : (!ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 2>
// CHECK-NEXT:    %[[M3:.*]] = ptx.alu(%[[M2]], %[[X1]]) {opcode = "max.NaN.f32"} : (!ptx.reg<f32 x 2>, !ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 2>
// CHECK-NEXT:    %[[X2:.*]] = ptx.shfl_bfly(%[[M3]]) {lane_mask = 2 : i32} : (!ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 2>
// CHECK-NEXT:    %[[MAX:.*]] = ptx.alu(%[[M3]], %[[X2]]) {opcode = "max.NaN.f32"} : (!ptx.reg<f32 x 2>, !ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 2>
// CHECK-NEXT:    ptx.alu(%[[S]], %[[S]]) {opcode = "add.f32", maps = [array<i32: 0, 2, 4, 6>, array<i32: 1, 3, 5, 7>]}
// CHECK:         ptx.shfl_bfly
// CHECK:         ptx.shfl_bfly
// CHECK-NEXT:    ptx.alu(%{{.*}}, %{{.*}}) {opcode = "add.f32"} : (!ptx.reg<f32 x 2>, !ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 2>
// the broadcast of the row maximum: element k reads its row's register
// CHECK-NEXT:    ptx.alu(%[[S]], %[[MAX]]) {opcode = "sub.f32", maps = [array<i32>, array<i32: 0, 0, 1, 1, 0, 0, 1, 1>]} : (!ptx.reg<f32 x 8>, !ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:  }
func.func @reduce_broadcast(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %rows = tile.iota : tensor<64xi32, #nvgpu_async.frag<row, warpgroups = 1>>
    %r2 = tile.expand_dims %rows, axis = 1 : tensor<64xi32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64x1xi32, #nvgpu_async.frag<row, warpgroups = 1>>
    %rb = tile.broadcast %r2 : tensor<64x1xi32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64x16xi32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %zero = arith.constant dense<0> : tensor<64x16xi32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %even = tile.cmpi eq, %rb, %zero : tensor<64x16xi32, #nvgpu_async.frag<acc, warpgroups = 1>> -> tensor<64x16xi1, #nvgpu_async.frag<acc, warpgroups = 1>>
    %xs = tile.splat %x : f32 -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %ninf = arith.constant 0xff800000 : f32
    %n = tile.splat %ninf : f32 -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %s = tile.select %even, %xs, %n : tensor<64x16xi1, #nvgpu_async.frag<acc, warpgroups = 1>>, tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %m = tile.reduce max %s, axis = 1 : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>> -> tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 1>>
    %sum = tile.reduce sum %s, axis = 1 : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>> -> tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 1>>
    %me = tile.expand_dims %m, axis = 1 : tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64x1xf32, #nvgpu_async.frag<row, warpgroups = 1>>
    %mb = tile.broadcast %me : tensor<64x1xf32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %d = arith.subf %s, %mb : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  }
  func.return
}

// -----

// Six elements per row: three pairs, then a pair and the odd one.
// CHECK-LABEL: func.func @odd_rows()
// CHECK:         %[[L1:.*]] = ptx.alu(%[[S:.*]], %[[S]]) {opcode = "add.f32", maps = [array<i32: 0, 2, 4, 6, 8, 10>, array<i32: 1, 3, 5, 7, 9, 11>]} : (!ptx.reg<f32 x 12>, !ptx.reg<f32 x 12>) -> !ptx.reg<f32 x 6>
// CHECK-NEXT:    %[[L2:.*]] = ptx.alu(%[[L1]], %[[L1]]) {opcode = "add.f32", maps = [array<i32: 0, 1>, array<i32: 2, 3>]} : (!ptx.reg<f32 x 6>, !ptx.reg<f32 x 6>) -> !ptx.reg<f32 x 2>
// CHECK-NEXT:    %[[L3:.*]] = ptx.alu(%[[L2]], %[[L1]]) {opcode = "add.f32", maps = [array<i32>, array<i32: 4, 5>]} : (!ptx.reg<f32 x 2>, !ptx.reg<f32 x 6>) -> !ptx.reg<f32 x 2>
// CHECK-NEXT:    ptx.shfl_bfly(%[[L3]]) {lane_mask = 1 : i32}
func.func @odd_rows(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %cols = tile.iota : tensor<24xi32, #nvgpu_async.frag<col, warpgroups = 1>>
    %c2 = tile.expand_dims %cols, axis = 0 : tensor<24xi32, #nvgpu_async.frag<col, warpgroups = 1>> -> tensor<1x24xi32, #nvgpu_async.frag<col, warpgroups = 1>>
    %cb = tile.broadcast %c2 : tensor<1x24xi32, #nvgpu_async.frag<col, warpgroups = 1>> -> tensor<64x24xi32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %zero = arith.constant dense<0> : tensor<64x24xi32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %first = tile.cmpi eq, %cb, %zero : tensor<64x24xi32, #nvgpu_async.frag<acc, warpgroups = 1>> -> tensor<64x24xi1, #nvgpu_async.frag<acc, warpgroups = 1>>
    %xs = tile.splat %x : f32 -> tensor<64x24xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %one = arith.constant 1.0 : f32
    %ones = tile.splat %one : f32 -> tensor<64x24xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %s = tile.select %first, %xs, %ones : tensor<64x24xi1, #nvgpu_async.frag<acc, warpgroups = 1>>, tensor<64x24xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %sum = tile.reduce sum %s, axis = 1 : tensor<64x24xf32, #nvgpu_async.frag<acc, warpgroups = 1>> -> tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 1>>
  }
  func.return
}

// -----

// A column reduction (nvgpu_async.column_reduce): each thread adds its two rows
// of each of its columns (one level), the lanes of a warp that share a column
// (g) shuffle with masks 4, 8 and 16; between two consumer barriers the first
// lane of each column writes its warp's partials to the warp's row of the
// scratch (4 cwg + warp, 16 columns: 64 bytes a row); consumer thread i (the
// threads past the 16 columns read the last) adds column i of the eight rows,
// in warp order, into row 0, and after a third barrier every thread reads its
// columns' totals.
// CHECK-LABEL: func.func @column_sums()
// CHECK:         %[[S:.*]] = ptx.alu(%{{.*}}, %{{.*}}, %{{.*}}) {opcode = "selp.f32"} : (!ptx.reg<f32>, !ptx.imm<f32>, !ptx.reg<pred x 8>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:    %[[T:.*]] = ptx.alu(%[[S]], %[[S]]) {opcode = "add.f32", maps = [array<i32: 0, 1, 4, 5>, array<i32: 2, 3, 6, 7>]} : (!ptx.reg<f32 x 8>, !ptx.reg<f32 x 8>) -> !ptx.reg<f32 x 4>
// CHECK-NEXT:    %[[X4:.*]] = ptx.shfl_bfly(%[[T]]) {lane_mask = 4 : i32}
// CHECK-NEXT:    %[[A4:.*]] = ptx.alu(%[[T]], %[[X4]]) {opcode = "add.f32"}
// CHECK-NEXT:    %[[X8:.*]] = ptx.shfl_bfly(%[[A4]]) {lane_mask = 8 : i32}
// CHECK-NEXT:    %[[A8:.*]] = ptx.alu(%[[A4]], %[[X8]]) {opcode = "add.f32"}
// CHECK-NEXT:    %[[X16:.*]] = ptx.shfl_bfly(%[[A8]]) {lane_mask = 16 : i32}
// CHECK-NEXT:    %[[W:.*]] = ptx.alu(%[[A8]], %[[X16]]) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
// CHECK-NEXT:    %[[WARP:.*]] = ptx.alu(%[[CWG:.*]], %{{.*}}, %[[WID:.*]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:    %[[WORD:.*]] = ptx.alu(%[[WARP]], %{{.*}}, %[[COL0:.*]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:    %[[ROW:.*]] = ptx.alu(%[[WORD]], %{{.*}}, %[[BASE:.*]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:    %[[G0:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:    ptx.bar(%[[ID:.*]]) {threads = 256 : i64}
// CHECK-NEXT:    ptx.st(%[[ROW]], %[[W]]) if %[[G0]] {space = "shared", offset = 0 : i64, offsets = array<i64: 0, 32>, value_map = array<i32: 0, 1, 2, 3>}
// CHECK-NEXT:    ptx.bar(%[[ID]]) {threads = 256 : i64}
// CHECK-NEXT:    %[[COL:.*]] = ptx.alu(%[[CTID:.*]], %{{.*}}) {opcode = "min.u32"}
// CHECK-NEXT:    %[[AT:.*]] = ptx.alu(%[[COL]], %{{.*}}, %[[BASE]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:    %[[P:.*]] = ptx.ld(%[[AT]]) {space = "shared", offset = 0 : i64, offsets = array<i64: 0, 64, 128, 192, 256, 320, 384, 448>} : (!ptx.reg<b32>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:    %[[S1:.*]] = ptx.alu(%[[P]], %[[P]]) {opcode = "add.f32", maps = [array<i32: 0>, array<i32: 1>]}
// CHECK-NEXT:    %[[S2:.*]] = ptx.alu(%[[S1]], %[[P]]) {opcode = "add.f32", maps = [array<i32>, array<i32: 2>]}
// CHECK-COUNT-4: ptx.alu(%{{.*}}, %[[P]]) {opcode = "add.f32"
// CHECK-NEXT:    %[[TOTAL:.*]] = ptx.alu(%{{.*}}, %[[P]]) {opcode = "add.f32", maps = [array<i32>, array<i32: 7>]}
// CHECK-NEXT:    %[[MINE16:.*]] = ptx.alu(%[[CTID]], %{{.*}}) {opcode = "setp.lt.u32"}
// CHECK-NEXT:    ptx.st(%[[AT]], %[[TOTAL]]) if %[[MINE16]] {space = "shared", offset = 0 : i64, value_map = array<i32: 0>}
// CHECK-NEXT:    ptx.bar(%[[ID]]) {threads = 256 : i64}
// CHECK-NEXT:    %[[MINE:.*]] = ptx.alu(%[[COL0]], %{{.*}}, %[[BASE]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:    ptx.ld(%[[MINE]]) {space = "shared", offset = 0 : i64, offsets = array<i64: 0, 32>} : (!ptx.reg<b32>) -> !ptx.reg<f32 x 4>
// CHECK-NEXT:  }
func.func @column_sums(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = 3072, cluster = 1>} {
  %scratch = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x128xf32>
  nvgpu_async.role_dispatch consumers = 2 producer {
  } consumer {
    %rows = tile.iota : tensor<128xi32, #nvgpu_async.frag<row, warpgroups = 2>>
    %r2 = tile.expand_dims %rows, axis = 1 : tensor<128xi32, #nvgpu_async.frag<row, warpgroups = 2>> -> tensor<128x1xi32, #nvgpu_async.frag<row, warpgroups = 2>>
    %rb = tile.broadcast %r2 : tensor<128x1xi32, #nvgpu_async.frag<row, warpgroups = 2>> -> tensor<128x16xi32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %zero = arith.constant dense<0> : tensor<128x16xi32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %first = tile.cmpi eq, %rb, %zero : tensor<128x16xi32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128x16xi1, #nvgpu_async.frag<acc, warpgroups = 2>>
    %xs = tile.splat %x : f32 -> tensor<128x16xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %one = arith.constant 1.0 : f32
    %ones = tile.splat %one : f32 -> tensor<128x16xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %s = tile.select %first, %xs, %ones : tensor<128x16xi1, #nvgpu_async.frag<acc, warpgroups = 2>>, tensor<128x16xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
    %sum = nvgpu_async.column_reduce sum %s, %scratch : tensor<128x16xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem<1x128xf32> -> tensor<16xf32, #nvgpu_async.frag<col, warpgroups = 2>>
  }
  func.return
}
