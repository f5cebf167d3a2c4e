// i8 and i64 tiles are loaded, stored, broadcast and converted to and from i32;
// arithmetic, compares, selects and element reads on them are refused where they are written,
// saying to compute in i32 (they would need byte or register-pair forms of every
// instruction).
// RUN: not tawa-opt %s --split-input-file -p tawa-hopper-pipeline 2>&1 | filecheck %s
// CHECK: tawa-opt: {{.*}}storage-integers.mlir:[[# @LINE + 5]]:3: error: arith.addi on i64 tiles: compute in i32 (tile.extsi first, tile.trunci after)
func.func @add64(%x: !tile.desc<?xi64, box = [64]>, %y: !tile.desc<?xi64, box = [64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : !tile.desc<?xi64, box = [64]> -> tensor<64xi64>
  %one = arith.constant dense<1> : tensor<64xi64>
  %s = arith.addi %t, %one : tensor<64xi64>
  tile.store %s, %y[%c0] : tensor<64xi64> -> !tile.desc<?xi64, box = [64]>
  func.return
}

// -----

// CHECK: tawa-opt: {{.*}}storage-integers.mlir:[[# @LINE + 5]]:3: error: tile.cmpi on i8 tiles: compute in i32 (tile.extsi first, tile.trunci after)
func.func @compare8(%x: !tile.desc<?xi8, box = [64]>, %y: !tile.desc<?xi32, box = [64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : !tile.desc<?xi8, box = [64]> -> tensor<64xi8>
  %zero = arith.constant dense<0> : tensor<64xi8>
  %m = tile.cmpi slt, %t, %zero : tensor<64xi8> -> tensor<64xi1>
  %i = tile.extsi %t : tensor<64xi8> -> tensor<64xi32>
  %s = tile.select %m, %i, %i : tensor<64xi1>, tensor<64xi32>
  tile.store %s, %y[%c0] : tensor<64xi32> -> !tile.desc<?xi32, box = [64]>
  func.return
}

// -----

// A 1-D i8 box of 8 bytes: TMA moves rows of a multiple of 16 bytes.
// CHECK: tawa-opt: {{.*}}storage-integers.mlir:[[# @LINE + 3]]:3: error: tile.load: box rows of 8 bytes: loads go through TMA, which moves rows of a multiple of 16 bytes
func.func @short(%x: !tile.desc<?xi8, box = [8]>, %y: !tile.desc<?xi8, box = [8]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : !tile.desc<?xi8, box = [8]> -> tensor<8xi8>
  tile.store %t, %y[%c0] : tensor<8xi8> -> !tile.desc<?xi8, box = [8]>
  func.return
}

// -----

// CHECK: tawa-opt: {{.*}}storage-integers.mlir:[[# @LINE + 4]]:3: error: tile.extract on i8 tiles: compute in i32 (tile.extsi first, tile.trunci after)
func.func @first(%x: !tile.desc<?xi8, box = [16]>, %y: !tile.desc<?xi32, box = [16]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : !tile.desc<?xi8, box = [16]> -> tensor<16xi8>
  %v = tile.extract %t[0] : tensor<16xi8>
  %w = arith.extsi %v : i8 to i32
  %s = tile.splat %w : i32 -> tensor<16xi32>
  tile.store %s, %y[%c0] : tensor<16xi32> -> !tile.desc<?xi32, box = [16]>
  func.return
}
