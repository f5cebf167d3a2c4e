// A reduction along a tile's columns (axis 0) has no register form: the first
// pass refuses it where it is written (it was refused only at
// convert-aref-to-nvgpu-async, after partitioning and pipelining).
// RUN: not tawa-opt %s -p aref-partition 2>&1 | filecheck %s
// RUN: not tawa-opt %s -p tawa-hopper-pipeline 2>&1 | filecheck %s
// CHECK: tawa-opt: {{.*}}reduce-axis.mlir:[[# @LINE + 9]]:3: error: tile.reduce: only reductions along rows (the last axis) are supported in registers (a column is spread over the lanes and warps of its warpgroups: reducing it needs shared memory); reduce the rows of the transposed tile instead (a product's: tile.dot with the operands swapped, C^T = B A^T)
// CHECK-NOT: error
func.func @column_sums(%a: !tile.desc<?x?xf32, box = [128, 64]> {tile.dims = ["M", "N"]},
    %c: !tile.desc<?xf32, box = [64]> {tile.dims = ["N"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n0 = arith.muli %pid, %c64 : index
  %t = tile.load %a[%c0, %n0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %s = tile.reduce sum %t, axis = 0 : tensor<128x64xf32> -> tensor<64xf32>
  tile.store %s, %c[%n0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
