// A CTA barrier written in a tile kernel would land in the consumer role only
// after aref-partition, where the producer never reaches it: the block hangs.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p aref-partition | filecheck %s

func.func @k(%a: !tile.desc<?x?xbf16, box = [128, 64]>, %c: !tile.desc<?x?xbf16, box = [128, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
  nvgpu_async.cta_barrier
  tile.store %t, %c[%c0, %c0] : tensor<128x64xbf16> -> !tile.desc<?x?xbf16, box = [128, 64]>
  func.return
}
// CHECK: thread-level-ops.mlir:8:3: error: nvgpu_async.cta_barrier is a thread-level op and a tile kernel describes whole tiles: aref-partition would run it in the consumer role only (a block-wide barrier there never completes); remove it

// -----

func.func @k(%c: !tile.desc<?x?xbf16, box = [128, 64]>) attributes {tile.kernel} {
  "gpu.barrier"() : () -> ()
  %c0 = arith.constant 0 : index
  %z = arith.constant dense<0.0> : tensor<128x64xbf16>
  tile.store %z, %c[%c0, %c0] : tensor<128x64xbf16> -> !tile.desc<?x?xbf16, box = [128, 64]>
  func.return
}
// CHECK: thread-level-ops.mlir:17:3: error: gpu.barrier is a thread-level op
