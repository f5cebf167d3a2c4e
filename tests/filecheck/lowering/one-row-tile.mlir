// A one-row matrix tile wider than a 128-byte swizzle chunk (1 x 64 f32): its TMA
// box is cut into chunks like any other row, and reading it into registers is
// refused at the op that reads it (the verifier of the TMA load took the tile's
// unit row for a batch axis and called the lowering's IR invalid: an internal
// error).
// RUN: not tawa-opt %s -p tawa-hopper-pipeline -t ptx 2>&1 | filecheck %s
// CHECK-NOT: internal error
// CHECK: one-row-tile.mlir:14:3: error: nvgpu_async.smem_load: only vector tiles (a bias, a row scale) and matrix tiles in the accumulator layout can be read from shared memory into registers
func.func @rowcopy(%x: !tile.desc<?x?xf32, box = [1, 64]>, %y: !tile.desc<?x?xf32, box = [1, 64]>) attributes {tile.kernel} {
  %r = tile.program_id y
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%r, %c0] : !tile.desc<?x?xf32, box = [1, 64]> -> tensor<1x64xf32>
  %two = arith.constant dense<2.0> : tensor<1x64xf32>
  %u = arith.mulf %t, %two : tensor<1x64xf32>
  tile.store %u, %y[%r, %c0] : tensor<1x64xf32> -> !tile.desc<?x?xf32, box = [1, 64]>
  func.return
}
