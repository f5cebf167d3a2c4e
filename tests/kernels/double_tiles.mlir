// o = 2 x by 64 x 64 tiles, one per program along y: a grid of 70000 programs
// along y (tests/test_limits.py, tests/gpu/test_limits_gpu.py) passes CUDA's
// 65535, so the dispatcher plans it persistent.
func.func @double_tiles(%x: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["R", "N"]}, %o: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["R", "N"]}) attributes {tile.kernel} {
  %pid = tile.program_id y
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %r0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%r0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %f = arith.extf %t : tensor<64x64xbf16> to tensor<64x64xf32>
  %d = arith.addf %f, %f : tensor<64x64xf32>
  %r = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %r, %o[%r0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}
