// Register tiles whose rows the accumulator layout cannot hold are refused at
// the op that makes them, saying why: under 64 rows a warpgroup, a multiple of
// 8 (whole halves of a warp slab: a padding row reads a row of the tile with
// the same g, the phase of its swizzle); from 64 on, whole 64-row blocks. Both
// were lowered as one 64-row block and read and wrote past the tile.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p tawa-hopper-pipeline | filecheck %s

// CHECK: error: math.exp: convert-aref-to-nvgpu-async: cannot hold the tensor<20x64xf32> value %e in registers: 20 rows: a tile under 64 rows is held in whole 8-row halves of a warp slab (the accumulator layout's lanes hold rows g and g + 8 of a 16-row slab): use a multiple of 8
func.func @rows20(%x: !tile.desc<?x?xf32, box = [20, 64]>,
    %o: !tile.desc<?x?xf32, box = [20, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [20, 64]> -> tensor<20x64xf32>
  %e = math.exp %t : tensor<20x64xf32>
  tile.store %e, %o[%c0, %c0] : tensor<20x64xf32> -> !tile.desc<?x?xf32, box = [20, 64]>
  func.return
}

// -----

// CHECK: error: tile.reduce: convert-aref-to-nvgpu-async: cannot hold the tensor<96xf32> value %s in registers: 96 rows: the accumulator layout holds whole 64-row blocks per warpgroup, or one block padded from 8 to 56 rows, a multiple of 8
func.func @rows96(%x: !tile.desc<?x?xf32, box = [96, 64]>,
    %o: !tile.desc<?xf32, box = [96]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [96, 64]> -> tensor<96x64xf32>
  %s = tile.reduce sum %t, axis = 1 : tensor<96x64xf32> -> tensor<96xf32>
  tile.store %s, %o[%c0] : tensor<96xf32> -> !tile.desc<?xf32, box = [96]>
  func.return
}
