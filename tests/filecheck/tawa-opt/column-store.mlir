// A tensor only stored may have a box TMA could not move: row sums kept as a
// column (an M x 1 box, 4 bytes a row) are stored from registers. The
// descriptor type used to refuse the box at parse (found by the outside-user
// sweep); tests/test_row_vectors.py runs it lane by lane.
// RUN: tawa-opt %s -p tawa-hopper-pipeline -t ptx | filecheck %s
// CHECK: .visible .entry row_sums_column(
// CHECK-NOT: cp.async.bulk.tensor.2d.global.shared
func.func @row_sums_column(%x: !tile.desc<?x?xf32, box = [128, 64]>, %o: !tile.desc<?x?xf32, box = [128, 1]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid, %c128 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %s = tile.reduce sum %t, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
  %e = tile.expand_dims %s, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  tile.store %e, %o[%m0, %c0] : tensor<128x1xf32> -> !tile.desc<?x?xf32, box = [128, 1]>
  func.return
}
