// Row kernels an outside user writes (the eighth sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py):
//   @rowquant_fp8: q = e4m3(x / s), s[m] = max_n |x[m, n]| / 448: per-row absmax
//                  quantization of bf16 rows (N <= 128) into fp8, the scales a second
//                  output
//   @lse_tiles:    o[m] = log sum_n exp(x[m, n]) over the 64-wide column tiles
//                  t0, t0 + ts, ... below t1 (scalar arguments: a loop whose step is not
//                  1, clamped to at least 1 with arith.maxsi as the lowering asks), an online max and sum in base 2 (math.exp2, math.log2), columns
//                  past N masked
// Grids: (ceil(M / 64),).

// q = e4m3(x / s), s = rowmax |x| / 448 (a row of zeros gets s = 0 and q = 0).
func.func @rowquant_fp8(%x: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["M", "N"]},
    %q: !tile.desc<?x?xf8E4M3FN, box = [64, 128]> {tile.dims = ["M", "N"]},
    %s: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xbf16, box = [64, 128]> -> tensor<64x128xbf16>
  %xf = arith.extf %t : tensor<64x128xbf16> to tensor<64x128xf32>
  %ax = math.absf %xf : tensor<64x128xf32>
  %amax = tile.reduce max %ax, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %fmax = arith.constant dense<4.480000e+02> : tensor<64xf32>
  %scale = arith.divf %amax, %fmax : tensor<64xf32>
  tile.store %scale, %s[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  %tiny = arith.constant dense<1.000000e-30> : tensor<64xf32>
  %safe = arith.maximumf %scale, %tiny : tensor<64xf32>
  %safe_e = tile.expand_dims %safe, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %safe_b = tile.broadcast %safe_e : tensor<64x1xf32> -> tensor<64x128xf32>
  %qf = arith.divf %xf, %safe_b : tensor<64x128xf32>
  %q8 = arith.truncf %qf : tensor<64x128xf32> to tensor<64x128xf8E4M3FN>
  tile.store %q8, %q[%m0, %c0] : tensor<64x128xf8E4M3FN> -> !tile.desc<?x?xf8E4M3FN, box = [64, 128]>
  func.return
}

// o[m] = logsumexp of x[m, 64 t : 64 t + 64] over t = t0, t0 + ts, ... < t1, in base 2.
func.func @lse_tiles(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %o: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]},
    %t0: index, %t1: index, %ts: index) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %step = arith.maxsi %ts, %c1 : index
  %m0 = arith.muli %pid, %c64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %N_i32 = arith.index_cast %N : index to i32
  %N_t = tile.splat %N_i32 : i32 -> tensor<64x64xi32>
  %iota = tile.iota : tensor<64xi32>
  %iota_r = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %log2e_s = arith.constant 1.44269502 : f32
  %log2e = tile.splat %log2e_s : f32 -> tensor<64x64xf32>
  %ninf_s = arith.constant 0xFF800000 : f32
  %ninf = tile.splat %ninf_s : f32 -> tensor<64x64xf32>
  %big_neg = arith.constant -1.0e30 : f32
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %m_f, %l_f = scf.for %t = %t0 to %t1 step %step iter_args(%m_i = %m_init, %l_i = %l_init) -> (tensor<64xf32>, tensor<64xf32>) {
    %n0 = arith.muli %t, %c64 : index
    %xt = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %n0_i32 = arith.index_cast %n0 : index to i32
    %n0_r = tile.splat %n0_i32 : i32 -> tensor<1x64xi32>
    %cols_r = arith.addi %iota_r, %n0_r : tensor<1x64xi32>
    %cols = tile.broadcast %cols_r : tensor<1x64xi32> -> tensor<64x64xi32>
    %inside = tile.cmpi slt, %cols, %N_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %x2 = arith.mulf %xt, %log2e : tensor<64x64xf32>
    %xm = tile.select %inside, %x2, %ninf : tensor<64x64xi1>, tensor<64x64xf32>
    %m_blk = tile.reduce max %xm, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %m_blk : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %sh = arith.subf %xm, %m_b : tensor<64x64xf32>
    %p = math.exp2 %sh : tensor<64x64xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %dm = arith.subf %m_i, %m_new : tensor<64xf32>
    %alpha = math.exp2 %dm : tensor<64xf32>
    %l_a = arith.mulf %l_i, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_a, %l_blk : tensor<64xf32>
    scf.yield %m_new, %l_new : tensor<64xf32>, tensor<64xf32>
  }
  %lg = math.log2 %l_f : tensor<64xf32>
  %lse2 = arith.addf %m_f, %lg : tensor<64xf32>
  %ln2 = arith.constant dense<0.693147182> : tensor<64xf32>
  %lse = arith.mulf %lse2, %ln2 : tensor<64xf32>
  tile.store %lse, %o[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
