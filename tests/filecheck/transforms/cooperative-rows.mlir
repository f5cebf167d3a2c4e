// A kernel without dots still has its stored tiles split by rows over the
// consumer warpgroups: a 64-row tile cannot be split over two (the second
// warpgroup's rows lie past the tile: shared-memory accesses out of bounds).
// RUN: not tawa-opt %s -p 'aref-partition,cooperative{num-consumers=2}' 2>&1 | filecheck %s
// RUN: tawa-opt %s -p 'aref-partition,cooperative' | filecheck %s --check-prefix=ONE
// CHECK: tawa-opt: {{.*}}cooperative-rows.mlir:17:3: error: tile.store: cooperative: the stored tile's 64 rows cannot be split into 64-row blocks over 2 warpgroups
// ONE: aref.warp_specialize consumers = 1

func.func @ew(%x: !tile.desc<?x?xbf16, box = [64, 128]>, %o: !tile.desc<?x?xbf16, box = [64, 128]>) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bm = arith.constant 64 : index
  %c0 = arith.constant 0 : index
  %m0 = arith.muli %pid_m, %bm : index
  %xt = tile.load %x[%m0, %c0] : !tile.desc<?x?xbf16, box = [64, 128]> -> tensor<64x128xbf16>
  %xf = arith.extf %xt : tensor<64x128xbf16> to tensor<64x128xf32>
  %rb = arith.truncf %xf : tensor<64x128xf32> to tensor<64x128xbf16>
  tile.store %rb, %o[%m0, %c0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}
