// Box rows that are not a multiple of 16 bytes: TMA cannot move them, so a
// load from such a box is refused by the first pass, where it is written; a
// tensor only stored may have any box (an M x 1 column is stored from
// registers). The descriptor type itself used to refuse every such box.
// RUN: not tawa-opt %s -p aref-partition 2>&1 | filecheck %s --check-prefix=LOAD
// RUN: not tawa-opt %s -p tawa-hopper-pipeline 2>&1 | filecheck %s --check-prefix=LOAD
// (column-store.mlir: an M x 1 box only stored compiles.)

// LOAD: tma-rows.mlir:[[# @LINE + 6]]:3: error: tile.load: box rows of 120 bytes: loads go through TMA, which moves rows of a multiple of 16 bytes (a tensor only stored may have any box) (in kernel @odd_rows)
func.func @odd_rows(%a: !tile.desc<?x?xbf16, box = [128, 60]>, %c: !tile.desc<?x?xbf16, box = [128, 60]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid, %c128 : index
  %t = tile.load %a[%m0, %c0] : !tile.desc<?x?xbf16, box = [128, 60]> -> tensor<128x60xbf16>
  tile.store %t, %c[%m0, %c0] : tensor<128x60xbf16> -> !tile.desc<?x?xbf16, box = [128, 60]>
  func.return
}

// LOAD: tma-rows.mlir:[[# @LINE + 3]]:3: error: tile.load: box rows of 8 bytes{{.*}}(in kernel @fp8_rows)
func.func @fp8_rows(%a: !tile.desc<?xf8E4M3FN, box = [8]>, %c: !tile.desc<?xf32, box = [8]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0] : !tile.desc<?xf8E4M3FN, box = [8]> -> tensor<8xf8E4M3FN>
  %f = arith.extf %t : tensor<8xf8E4M3FN> to tensor<8xf32>
  tile.store %f, %c[%c0] : tensor<8xf32> -> !tile.desc<?xf32, box = [8]>
  func.return
}
