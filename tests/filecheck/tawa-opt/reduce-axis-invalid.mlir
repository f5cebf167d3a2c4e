// What a column reduction (tile.reduce along axis 0) does not cover, refused by
// the first pass where it is written, with the reason.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p aref-partition | filecheck %s

// CHECK: reduce-axis-invalid.mlir:[[# @LINE + 4]]:3: error: tile.reduce: a column reduction (axis 0) of 96 rows: the rows are reduced in whole 64-row blocks (the accumulator layout's, each warp a 16-row slab of each), or in one padded from a multiple of 8 rows under 64
func.func @rows(%a: !tile.desc<?x?xf32, box = [96, 64]>, %c: !tile.desc<?xf32, box = [64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xf32, box = [96, 64]> -> tensor<96x64xf32>
  %s = tile.reduce max %t, axis = 0 : tensor<96x64xf32> -> tensor<64xf32>
  tile.store %s, %c[%c0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}

// -----

// CHECK: reduce-axis-invalid.mlir:[[# @LINE + 4]]:3: error: tile.reduce: a column reduction (axis 0) of 12 columns: a column tile holds whole 8-column groups
func.func @cols(%a: !tile.desc<?x?xf32, box = [128, 12]>, %c: !tile.desc<?xf32, box = [12]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xf32, box = [128, 12]> -> tensor<128x12xf32>
  %s = tile.reduce min %t, axis = 0 : tensor<128x12xf32> -> tensor<12xf32>
  tile.store %s, %c[%c0] : tensor<12xf32> -> !tile.desc<?xf32, box = [12]>
  func.return
}

// -----

// CHECK: reduce-axis-invalid.mlir:[[# @LINE + 4]]:3: error: tile.reduce: a column reduction (axis 0) of a 1x64 tile, which is held as a vector: reduce along its other axis (or use it as it is)
func.func @one_row(%a: !tile.desc<?x?xf32, box = [1, 64]>, %c: !tile.desc<?xf32, box = [64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xf32, box = [1, 64]> -> tensor<1x64xf32>
  %s = tile.reduce sum %t, axis = 0 : tensor<1x64xf32> -> tensor<64xf32>
  tile.store %s, %c[%c0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}

// -----

// A rank-3 tile is refused where it is made (it was an internal error in
// convert-aref-to-nvgpu-async when a reduction along its last axis kept it).
// CHECK: reduce-axis-invalid.mlir:[[# @LINE + 3]]:3: error: tile.load: a rank-3 tile (2x64x64): tiles in registers are vectors or matrices; load a box with leading 1s as a matrix (box = [1, 64, 64] -> tensor<64x64xf32>) and loop over the rest
func.func @rank3(%a: !tile.desc<?x?x?xf32, box = [2, 64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0, %c0] : !tile.desc<?x?x?xf32, box = [2, 64, 64]> -> tensor<2x64x64xf32>
  %s = tile.reduce sum %t, axis = 0 : tensor<2x64x64xf32> -> tensor<64x64xf32>
  tile.store %s, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// -----

// CHECK: reduce-axis-invalid.mlir:[[# @LINE + 4]]:3: error: tile.splat: a rank-3 tile (2x64x8): tiles in registers are vectors or matrices; load a box with leading 1s as a matrix (box = [1, 64, 8] -> tensor<64x8xf32>) and loop over the rest
func.func @rank3_last(%c: !tile.desc<?x?xf32, box = [2, 64]>, %v: f32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %t = tile.splat %v : f32 -> tensor<2x64x8xf32>
  %s = tile.reduce sum %t, axis = 2 : tensor<2x64x8xf32> -> tensor<2x64xf32>
  tile.store %s, %c[%c0, %c64] : tensor<2x64xf32> -> !tile.desc<?x?xf32, box = [2, 64]>
  func.return
}
