// arith.andi / ori / xori on i1 values (a loop's branch condition, two masks
// combined) live in predicate registers: they lower to and.pred / or.pred /
// xor.pred (they were b32 instructions on predicates, which the ptx verifier
// refused without a location and ptxas rejected).
// RUN: tawa-opt %s -p tawa-hopper-pipeline -t ptx | filecheck %s
// CHECK-LABEL: .entry masked_rows(
// CHECK-DAG:   or.pred
// CHECK-DAG:   and.pred
// CHECK-DAG:   xor.pred
// CHECK-NOT:   {{(and|or|xor)}}.b32 %p
func.func @masked_rows(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %lo: index, %hi: index, %flip_at: index) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %iota = tile.iota : tensor<64xi32>
  %row = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cols = tile.broadcast %row : tensor<1x64xi32> -> tensor<64x64xi32>
  %lo_i = arith.index_cast %lo : index to i32
  %hi_i = arith.index_cast %hi : index to i32
  %lo_t = tile.splat %lo_i : i32 -> tensor<64x64xi32>
  %hi_t = tile.splat %hi_i : i32 -> tensor<64x64xi32>
  %above = tile.cmpi sge, %cols, %lo_t : tensor<64x64xi32> -> tensor<64x64xi1>
  %below = tile.cmpi slt, %cols, %hi_t : tensor<64x64xi32> -> tensor<64x64xi1>
  %inside = arith.andi %above, %below : tensor<64x64xi1>
  %kept = tile.select %inside, %t, %zero : tensor<64x64xi1>, tensor<64x64xf32>
  %first = arith.cmpi eq, %pid, %c0 : index
  %flip = arith.cmpi ult, %pid, %flip_at : index
  %either = arith.ori %first, %flip : i1
  %only_one = arith.xori %either, %flip : i1
  %out = scf.if %only_one -> (tensor<64x64xf32>) {
    scf.yield %kept : tensor<64x64xf32>
  } else {
    %sq = arith.mulf %t, %t : tensor<64x64xf32>
    scf.yield %sq : tensor<64x64xf32>
  }
  tile.store %out, %y[%m0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
