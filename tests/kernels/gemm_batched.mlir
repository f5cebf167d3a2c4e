// A batched GEMM: C[b] = A[b] @ B[b]^T, the batch on grid axis z (tile.dims B, M,
// N, K). A shape may leave B out (the CLI's shape= option, explain(M=...)).
func.func @bgemm(%a: !tile.desc<?x?x?xbf16, box = [1, 128, 64]> {tile.box = ["", "BM", "BK"], tile.dims = ["B", "M", "K"]},
    %b: !tile.desc<?x?x?xbf16, box = [1, 128, 64]> {tile.box = ["", "BN", "BK"], tile.dims = ["B", "N", "K"]},
    %c: !tile.desc<?x?x?xbf16, box = [1, 128, 128]> {tile.box = ["", "BM", "BN"], tile.dims = ["B", "M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %bz = tile.program_id z
  %K = tile.dim %a, 2 : !tile.desc<?x?x?xbf16, box = [1, 128, 64]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 64 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%bz, %m0, %k] : !tile.desc<?x?x?xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%bz, %n0, %k] : !tile.desc<?x?x?xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%bz, %m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?x?xbf16, box = [1, 128, 128]>
  func.return
}
