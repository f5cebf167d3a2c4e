// C = bf16(A @ B^T) with A stored K x M (as a backward pass holds activations):
// the A tile is loaded K x M and transposed where it lies (tile.trans of a
// shared-memory tile is a view), and wgmma reads it MN-major (imm-trans-a 1,
// 16-bit inputs only). B is stored N x K as in @gemm_nt.
// Grid: (ceil(M / 128), ceil(N / 128)).
func.func @gemm_at(%a: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["K", "M"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 0 : !tile.desc<?x?xbf16, box = [64, 128]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bm : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%k, %m0] : !tile.desc<?x?xbf16, box = [64, 128]> -> tensor<64x128xbf16>
    %tat = tile.trans %ta : tensor<64x128xbf16> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %tat, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}
