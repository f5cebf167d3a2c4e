// O = erf(X), f32 [M, 128] in 64-row tiles: math.erf alone, to measure the
// lowering's polynomials (lowering/distribute/elementwise._erf) on the GPU
// against torch.erf (tests/gpu/test_erf_gpu.py). Grid: (ceil(M / 64),).
func.func @erf(%x: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]},
    %o: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [64, 128]> -> tensor<64x128xf32>
  %e = math.erf %t : tensor<64x128xf32>
  tile.store %e, %o[%m0, %c0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}
