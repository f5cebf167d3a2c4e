// An outside user's GEMM-like kernels (the sweep of issue 16: every plan the
// rules make for them lowers, tests/test_dispatch_plans_lower.py).
//   @nn_f16_bias_res: C = f16(A @ B + bias + R), B stored K x N, f16 throughout
//   @bgemm_nn:        C[b] = bf16(A[b] @ B[b]), B[b] stored K x N, batch on grid z
//   @fp8_bias_e4m3:   C = e4m3(relu(A @ B^T * s + bias)), bias f32 per column
func.func @nn_f16_bias_res(%a: !tile.desc<?x?xf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf16, box = [64, 128]> {tile.box = ["BK", "BN"], tile.dims = ["K", "N"]},
    %bias: !tile.desc<?xf16, box = [128]> {tile.box = ["BN"], tile.dims = ["N"]},
    %r: !tile.desc<?x?xf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
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
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xf16, box = [128]> -> tensor<128xf16>
  %bias_f = arith.extf %bias_t : tensor<128xf16> to tensor<128xf32>
  %bias_row = tile.expand_dims %bias_f, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x128xf32> -> tensor<128x128xf32>
  %x = arith.addf %acc, %bias_b : tensor<128x128xf32>
  %res_t = tile.load %r[%m0, %n0] : !tile.desc<?x?xf16, box = [128, 128]> -> tensor<128x128xf16>
  %res_f = arith.extf %res_t : tensor<128x128xf16> to tensor<128x128xf32>
  %sum = arith.addf %x, %res_f : tensor<128x128xf32>
  %out = arith.truncf %sum : tensor<128x128xf32> to tensor<128x128xf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xf16> -> !tile.desc<?x?xf16, box = [128, 128]>
  func.return
}

func.func @bgemm_nn(%a: !tile.desc<?x?x?xbf16, box = [1, 128, 64]> {tile.box = ["", "BM", "BK"], tile.dims = ["B", "M", "K"]},
    %b: !tile.desc<?x?x?xbf16, box = [1, 64, 128]> {tile.box = ["", "BK", "BN"], tile.dims = ["B", "K", "N"]},
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
    %tb = tile.load %b[%bz, %k, %n0] : !tile.desc<?x?x?xbf16, box = [1, 64, 128]> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tb, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%bz, %m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?x?xbf16, box = [1, 128, 128]>
  func.return
}

func.func @fp8_bias_e4m3(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xf32, box = [128]> {tile.box = ["BN"], tile.dims = ["N"]},
    %c: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %s: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 128 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tbt = tile.trans %tb : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %s_t = tile.splat %s : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %s_t : tensor<128x128xf32>
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %bias_row = tile.expand_dims %bias_t, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x128xf32> -> tensor<128x128xf32>
  %x = arith.addf %scaled, %bias_b : tensor<128x128xf32>
  %relu = arith.maximumf %x, %zero : tensor<128x128xf32>
  %out = arith.truncf %relu : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xf8E4M3FN> -> !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  func.return
}
