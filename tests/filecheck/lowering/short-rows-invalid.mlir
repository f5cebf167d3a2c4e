// Register tiles whose rows the accumulator layout cannot hold are refused at
// the op that makes them, saying why: under 64 rows a warpgroup, whole 16-row
// warp slabs (a lane's rows g and g + 8 are read and masked together); from 64
// on, whole 64-row blocks. Both were lowered as one 64-row block and read and
// wrote past the tile.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p tawa-hopper-pipeline | filecheck %s

// CHECK: error: math.exp: convert-aref-to-nvgpu-async: cannot hold the tensor<24x64xf32> value %e in registers: 24 rows: a tile under 64 rows is held in whole 16-row warp slabs (each warp of the accumulator layout holds 16 rows): use 16, 32 or 48 rows
func.func @rows24(%x: !tile.desc<?x?xf32, box = [24, 64]>,
    %o: !tile.desc<?x?xf32, box = [24, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [24, 64]> -> tensor<24x64xf32>
  %e = math.exp %t : tensor<24x64xf32>
  tile.store %e, %o[%c0, %c0] : tensor<24x64xf32> -> !tile.desc<?x?xf32, box = [24, 64]>
  func.return
}

// -----

// CHECK: error: tile.reduce: convert-aref-to-nvgpu-async: cannot hold the tensor<96xf32> value %s in registers: 96 rows: the accumulator layout holds whole 64-row blocks per warpgroup, or one block padded from 16, 32 or 48 rows
func.func @rows96(%x: !tile.desc<?x?xf32, box = [96, 64]>,
    %o: !tile.desc<?xf32, box = [96]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [96, 64]> -> tensor<96x64xf32>
  %s = tile.reduce sum %t, axis = 1 : tensor<96x64xf32> -> tensor<96xf32>
  tile.store %s, %o[%c0] : tensor<96xf32> -> !tile.desc<?xf32, box = [96]>
  func.return
}
