// GEMM with a fused epilogue: the accumulator never leaves registers before it is
// scaled, biased, activated and rounded. A is M x K, B is stored N x K (as in @gemm_nt),
// bias has N, the residual R is M x N (tile.dims: mismatched M, N, K are refused).
// Grid: (ceil(M/128), ceil(N/128)).
//
//   @gemm_scale_bias_relu: C = bf16(relu(alpha * (A @ B^T) + bias))
//   @gemm_bias_gelu:       C = bf16(gelu(A @ B^T + bias)), tanh approximation
//   @gemm_bias_gelu_erf:   the same with exact GELU, 0.5 x (1 + erf(x / sqrt 2)) (the
//                          default GELU of most models)
//   @gemm_residual_gelu:   C = bf16(gelu(alpha * (A @ B^T) + bias) + R), the fused
//                          epilogue of a transformer block: R's tile, loaded after
//                          the K loop, reaches the registers in the accumulator layout

func.func @gemm_scale_bias_relu(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xbf16, box = [128]> {tile.box = ["BN"], tile.dims = ["N"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %alpha: f32) attributes {tile.kernel} {
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
  %alpha_t = tile.splat %alpha : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %alpha_t : tensor<128x128xf32>
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xbf16, box = [128]> -> tensor<128xbf16>
  %bias_f = arith.extf %bias_t : tensor<128xbf16> to tensor<128xf32>
  %bias_row = tile.expand_dims %bias_f, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x128xf32> -> tensor<128x128xf32>
  %biased = arith.addf %scaled, %bias_b : tensor<128x128xf32>
  %relu = arith.maximumf %biased, %zero : tensor<128x128xf32>
  %out = arith.truncf %relu : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @gemm_bias_gelu(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xbf16, box = [128]> {tile.box = ["BN"], tile.dims = ["N"]},
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
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xbf16, box = [128]> -> tensor<128xbf16>
  %bias_f = arith.extf %bias_t : tensor<128xbf16> to tensor<128xf32>
  %bias_row = tile.expand_dims %bias_f, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x128xf32> -> tensor<128x128xf32>
  %x = arith.addf %acc, %bias_b : tensor<128x128xf32>
  // gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
  %half = arith.constant dense<5.000000e-01> : tensor<128x128xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<128x128xf32>
  %k0 = arith.constant dense<0.797884583> : tensor<128x128xf32>
  %k1 = arith.constant dense<4.471500e-02> : tensor<128x128xf32>
  %x2 = arith.mulf %x, %x : tensor<128x128xf32>
  %x3 = arith.mulf %x2, %x : tensor<128x128xf32>
  %cubic = arith.mulf %x3, %k1 : tensor<128x128xf32>
  %inner = arith.addf %x, %cubic : tensor<128x128xf32>
  %arg = arith.mulf %inner, %k0 : tensor<128x128xf32>
  %th = math.tanh %arg : tensor<128x128xf32>
  %onep = arith.addf %th, %one : tensor<128x128xf32>
  %hx = arith.mulf %x, %half : tensor<128x128xf32>
  %gelu = arith.mulf %hx, %onep : tensor<128x128xf32>
  %out = arith.truncf %gelu : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @gemm_bias_gelu_erf(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xbf16, box = [128]> {tile.box = ["BN"], tile.dims = ["N"]},
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
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xbf16, box = [128]> -> tensor<128xbf16>
  %bias_f = arith.extf %bias_t : tensor<128xbf16> to tensor<128xf32>
  %bias_row = tile.expand_dims %bias_f, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x128xf32> -> tensor<128x128xf32>
  %x = arith.addf %acc, %bias_b : tensor<128x128xf32>
  // gelu(x) = 0.5 x (1 + erf(x / sqrt 2)); PTX has no erf: the lowering computes
  // it from two polynomials to 1.3e-7 relative (lowering/distribute/elementwise._erf)
  %half = arith.constant dense<5.000000e-01> : tensor<128x128xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<128x128xf32>
  %rsqrt2 = arith.constant dense<0.707106769> : tensor<128x128xf32>
  %arg = arith.mulf %x, %rsqrt2 : tensor<128x128xf32>
  %erf = math.erf %arg : tensor<128x128xf32>
  %onep = arith.addf %erf, %one : tensor<128x128xf32>
  %hx = arith.mulf %x, %half : tensor<128x128xf32>
  %gelu = arith.mulf %hx, %onep : tensor<128x128xf32>
  %out = arith.truncf %gelu : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @gemm_residual_gelu(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xbf16, box = [128]> {tile.box = ["BN"], tile.dims = ["N"]},
    %r: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %alpha: f32) attributes {tile.kernel} {
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
  %alpha_t = tile.splat %alpha : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %alpha_t : tensor<128x128xf32>
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xbf16, box = [128]> -> tensor<128xbf16>
  %bias_f = arith.extf %bias_t : tensor<128xbf16> to tensor<128xf32>
  %bias_row = tile.expand_dims %bias_f, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x128xf32> -> tensor<128x128xf32>
  %x = arith.addf %scaled, %bias_b : tensor<128x128xf32>
  // gelu(x) = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
  %half = arith.constant dense<5.000000e-01> : tensor<128x128xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<128x128xf32>
  %k0 = arith.constant dense<0.797884583> : tensor<128x128xf32>
  %k1 = arith.constant dense<4.471500e-02> : tensor<128x128xf32>
  %x2 = arith.mulf %x, %x : tensor<128x128xf32>
  %x3 = arith.mulf %x2, %x : tensor<128x128xf32>
  %cubic = arith.mulf %x3, %k1 : tensor<128x128xf32>
  %inner = arith.addf %x, %cubic : tensor<128x128xf32>
  %arg = arith.mulf %inner, %k0 : tensor<128x128xf32>
  %th = math.tanh %arg : tensor<128x128xf32>
  %onep = arith.addf %th, %one : tensor<128x128xf32>
  %hx = arith.mulf %x, %half : tensor<128x128xf32>
  %gelu = arith.mulf %hx, %onep : tensor<128x128xf32>
  %res_t = tile.load %r[%m0, %n0] : !tile.desc<?x?xbf16, box = [128, 128]> -> tensor<128x128xbf16>
  %res_f = arith.extf %res_t : tensor<128x128xbf16> to tensor<128x128xf32>
  %sum = arith.addf %gelu, %res_f : tensor<128x128xf32>
  %out = arith.truncf %sum : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}
