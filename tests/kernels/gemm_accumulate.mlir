// GEMMs split-k and stream-k take beyond the plain product (tests/test_split_k.py):
//   @gemm_accumulate: C = bf16(A @ B^T + C), the K loop's accumulator starting
//                     from the loaded C (each slice sums from zero; the reduce
//                     kernel adds C once)
//   @gemm_two_outputs: C = bf16(A @ B^T) and D = bf16(relu(A @ B^T)), two
//                     stores of the one accumulator (the reduce kernel makes both)

func.func @gemm_accumulate(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 64 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %ct = tile.load %c[%m0, %n0] : !tile.desc<?x?xbf16, box = [128, 128]> -> tensor<128x128xbf16>
  %init = arith.extf %ct : tensor<128x128xbf16> to tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %init) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @gemm_two_outputs(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %d: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 64 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  %relu = arith.maximumf %acc, %zero : tensor<128x128xf32>
  %rout = arith.truncf %relu : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %rout, %d[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}
