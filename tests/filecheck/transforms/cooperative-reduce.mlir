// A reduced tile is split by rows over the consumer warpgroups too (its row
// vector has no 2-D store to count; a kernel with no such tile once got three
// warpgroups for 128 rows): two by default, and not three.
// RUN: tawa-opt %s -p 'aref-partition,cooperative' | filecheck %s --check-prefix=TWO
// RUN: not tawa-opt %s -p 'aref-partition,cooperative{num-consumers=3}' 2>&1 | filecheck %s
// TWO: aref.warp_specialize consumers = 2
// CHECK: tawa-opt: {{.*}}cooperative-reduce.mlir:15:3: error: tile.reduce: cooperative: the reduced tile's 128 rows cannot be split into 64-row blocks over 3 warpgroups

func.func @row_sums(%x: !tile.desc<?x?xf32, box = [128, 64]>, %o: !tile.desc<?xf32, box = [128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid, %c128 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %s = tile.reduce sum %t, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
  tile.store %s, %o[%m0] : tensor<128xf32> -> !tile.desc<?xf32, box = [128]>
  func.return
}
