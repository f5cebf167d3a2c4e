// A tile.select of bf16 tiles (a K-remainder mask on the A tile) has no
// register form (the two elements of a pair take different mask bits): the
// first pass refuses it where it is written, saying what to write instead (it
// was refused only when distributed, naming a fragment layout).
// RUN: not tawa-opt %s -p aref-partition 2>&1 | filecheck %s
// RUN: not tawa-opt %s -p tawa-hopper-pipeline -t ptx 2>&1 | filecheck %s
// CHECK: tawa-opt: {{.*}}narrow-select.mlir:[[# @LINE + 11]]:3: error: tile.select on bf16 values: compute in f32 (arith.extf first, arith.truncf after)
// CHECK-NOT: error
func.func @masked(%x: !tile.desc<?x?xbf16, box = [64, 64]>, %y: !tile.desc<?x?xbf16, box = [64, 64]>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xbf16>
  %iota = tile.iota : tensor<64xi32>
  %row = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cols = tile.broadcast %row : tensor<1x64xi32> -> tensor<64x64xi32>
  %n_t = tile.splat %n : i32 -> tensor<64x64xi32>
  %inside = tile.cmpi slt, %cols, %n_t : tensor<64x64xi32> -> tensor<64x64xi1>
  %m = tile.select %inside, %t, %zero : tensor<64x64xi1>, tensor<64x64xbf16>
  tile.store %m, %y[%c0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}
