// GEMM kernels: C = A @ B, 16-bit inputs, f32 accumulation, result rounded to the
// input type. One program computes a 128x128 tile of C; the K loop walks 64-wide slabs.
// A is M x K, row-major (tile.dims names M, N, K); B comes in both layouts:
//   @gemm_nt*: B is stored N x K (row-major): each B tile is loaded and transposed;
//   @gemm_nn*: B is stored K x N (row-major): each B tile is used as loaded.
// Tiles at the edges of M, N and K read zeros and are stored clipped, so any problem
// size works. Launch grid: (ceil(M / 128), ceil(N / 128)). Mismatched M, N, K are refused.

func.func @gemm_nt(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
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
  func.return
}

func.func @gemm_nn(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 128]> {tile.box = ["BK", "BN"], tile.dims = ["K", "N"]},
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
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%k, %n0] : !tile.desc<?x?xbf16, box = [64, 128]> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tb, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @gemm_nt_f16(%a: !tile.desc<?x?xf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 64 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf16, box = [128, 64]> -> tensor<128x64xf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf16, box = [128, 64]> -> tensor<128x64xf16>
    %tbt = tile.trans %tb : tensor<128x64xf16> -> tensor<64x128xf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xf16> -> !tile.desc<?x?xf16, box = [128, 128]>
  func.return
}

func.func @gemm_nn_f16(%a: !tile.desc<?x?xf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf16, box = [64, 128]> {tile.box = ["BK", "BN"], tile.dims = ["K", "N"]},
    %c: !tile.desc<?x?xf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 64 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf16, box = [128, 64]> -> tensor<128x64xf16>
    %tb = tile.load %b[%k, %n0] : !tile.desc<?x?xf16, box = [64, 128]> -> tensor<64x128xf16>
    %next = tile.dot %ta, %tb, %acc_k : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xf16> -> !tile.desc<?x?xf16, box = [128, 128]>
  func.return
}
