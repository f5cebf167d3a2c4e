// A loaded tile transposed and stored as it is: a transposed shared tile is neither
// stored nor read into registers, said as such at the store (it was called "a loaded
// tile carried through a loop or a branch").
// RUN: not tawa-opt %s -p tawa-hopper-pipeline 2>&1 | filecheck %s
// CHECK: transposed-store.mlir:16:3: error: tile.store: convert-aref-to-nvgpu-async: %tt is a transposed loaded tile: a transposed shared tile is neither stored nor read into registers; load the tile in the orientation the store uses
func.func @store_trans(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["N", "M"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %tt = tile.trans %t : tensor<64x64xf32> -> tensor<64x64xf32>
  // a loaded tile transposed and stored
  tile.store %tt, %y[%n0, %m0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
