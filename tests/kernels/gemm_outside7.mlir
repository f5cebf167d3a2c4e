// GEMMs an outside user writes (the seventh sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py): row kernels on the accumulator of a one-tile-wide
// GEMM (N <= the tile's 128 columns, the columns past N masked), C = A B^T.
//   @gemm_layernorm: LayerNorm over N with a weight and a bias vector, 64-row tiles
//                    (the variance sums only the N valid columns), math.rsqrt, bf16 out
//   @gemm_top1:      the row maximum and its first column (an i32 argmax over N, by
//                    tile.cmpf oeq against the broadcast maximum), 128-row tiles
// Grid: (ceil(M / tile rows),).

// y = bf16((C - mean) rsqrt(var + eps) w + b), mean and var over the N columns of a row.
func.func @gemm_layernorm(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %w: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %bias: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %y: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["M", "N"]},
    %eps: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %N = tile.dim %b, 0 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %next : tensor<64x128xf32>
  }
  %N_i32 = arith.index_cast %N : index to i32
  %N_f = arith.sitofp %N_i32 : i32 to f32
  %one = arith.constant 1.0 : f32
  %inv_n = arith.divf %one, %N_f : f32
  %inv_n_r = tile.splat %inv_n : f32 -> tensor<64xf32>
  %N_t = tile.splat %N_i32 : i32 -> tensor<64x128xi32>
  %cols_1d = tile.iota : tensor<128xi32>
  %cols_row = tile.expand_dims %cols_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cols = tile.broadcast %cols_row : tensor<1x128xi32> -> tensor<64x128xi32>
  %inside = tile.cmpi slt, %cols, %N_t : tensor<64x128xi32> -> tensor<64x128xi1>
  %sum = tile.reduce sum %acc, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %mean = arith.mulf %sum, %inv_n_r : tensor<64xf32>
  %mean_c = tile.expand_dims %mean, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %mean_b = tile.broadcast %mean_c : tensor<64x1xf32> -> tensor<64x128xf32>
  %d_all = arith.subf %acc, %mean_b : tensor<64x128xf32>
  %d = tile.select %inside, %d_all, %zero : tensor<64x128xi1>, tensor<64x128xf32>
  %sq = arith.mulf %d, %d : tensor<64x128xf32>
  %ssq = tile.reduce sum %sq, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %var = arith.mulf %ssq, %inv_n_r : tensor<64xf32>
  %eps_r = tile.splat %eps : f32 -> tensor<64xf32>
  %var_eps = arith.addf %var, %eps_r : tensor<64xf32>
  %rstd = math.rsqrt %var_eps : tensor<64xf32>
  %rstd_c = tile.expand_dims %rstd, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %rstd_b = tile.broadcast %rstd_c : tensor<64x1xf32> -> tensor<64x128xf32>
  %norm = arith.mulf %d, %rstd_b : tensor<64x128xf32>
  %w_t = tile.load %w[%c0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %b_t = tile.load %bias[%c0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %w_r = tile.expand_dims %w_t, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %w_b = tile.broadcast %w_r : tensor<1x128xf32> -> tensor<64x128xf32>
  %b_r = tile.expand_dims %b_t, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %b_b = tile.broadcast %b_r : tensor<1x128xf32> -> tensor<64x128xf32>
  %scaled = arith.mulf %norm, %w_b : tensor<64x128xf32>
  %shifted = arith.addf %scaled, %b_b : tensor<64x128xf32>
  %out = arith.truncf %shifted : tensor<64x128xf32> to tensor<64x128xbf16>
  tile.store %out, %y[%m0, %c0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}

// top[m] = max_n C[m, n], idx[m] = the first n where C[m, n] = top[m] (i32), over n < N.
func.func @gemm_top1(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %top: !tile.desc<?xf32, box = [128]> {tile.dims = ["M"]},
    %idx: !tile.desc<?xi32, box = [128]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %N = tile.dim %b, 0 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %N_i32 = arith.index_cast %N : index to i32
  %N_t = tile.splat %N_i32 : i32 -> tensor<128x128xi32>
  %cols_1d = tile.iota : tensor<128xi32>
  %cols_row = tile.expand_dims %cols_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cols = tile.broadcast %cols_row : tensor<1x128xi32> -> tensor<128x128xi32>
  %inside = tile.cmpi slt, %cols, %N_t : tensor<128x128xi32> -> tensor<128x128xi1>
  %ninf = arith.constant 0xFF800000 : f32
  %ninf_t = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %c = tile.select %inside, %acc, %ninf_t : tensor<128x128xi1>, tensor<128x128xf32>
  %mx = tile.reduce max %c, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
  %mx_c = tile.expand_dims %mx, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %mx_b = tile.broadcast %mx_c : tensor<128x1xf32> -> tensor<128x128xf32>
  %at = tile.cmpf oeq, %c, %mx_b : tensor<128x128xf32> -> tensor<128x128xi1>
  %big = arith.constant dense<2147483647> : tensor<128x128xi32>
  %cand = tile.select %at, %cols, %big : tensor<128x128xi1>, tensor<128x128xi32>
  %first = tile.reduce min %cand, axis = 1 : tensor<128x128xi32> -> tensor<128xi32>
  tile.store %mx, %top[%m0] : tensor<128xf32> -> !tile.desc<?xf32, box = [128]>
  tile.store %first, %idx[%m0] : tensor<128xi32> -> !tile.desc<?xi32, box = [128]>
  func.return
}
