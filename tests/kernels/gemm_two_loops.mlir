// Two K loops in a row, each into its own accumulator: C = A1 B1^T + A2 B2^T, the
// two products summed in the epilogue. The second loop's wgmmas must not wait
// for, or be serialized behind, the first loop's last groups (ptxas C7515).
// a1: M x K1, b1: N x K1, a2: M x K2, b2: N x K2 (bf16), c: M x N.
// Grid: (ceil(M / 128), ceil(N / 128)).
func.func @gemm_two_loops(%a1: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b1: !tile.desc<?x?xbf16, box = [128, 64]>,
    %a2: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b2: !tile.desc<?x?xbf16, box = [128, 64]>,
    %c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K1 = tile.dim %a1, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %K2 = tile.dim %a2, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc1 = scf.for %k = %c0 to %K1 step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a1[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b1[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %acc2 = scf.for %k = %c0 to %K2 step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a2[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b2[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %sum = arith.addf %acc1, %acc2 : tensor<128x128xf32>
  %out = arith.truncf %sum : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}
