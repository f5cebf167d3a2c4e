// Attention an outside user writes (the fourth sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py): 64-row query blocks, 64-key blocks, head dim 64.
//   @attention_lse:     O and the log-sum-exp of each query row (natural log, of the
//                       scaled logits), lse[bh, i], a second, f32 output
//   @attention_keymask: a key-padding mask from a loaded per-key f32 vector of 1s
//                       (keep) and 0s (drop), loaded next to K and V, applied as
//                       s + (mask - 1) 1e30 (float tiles have no compare)
//   @attention_band:    a symmetric band without causality, |i - j| < W (W a scalar):
//                       the key loop runs from floor(max(m0 - W + 1, 0) / 64) 64 to
//                       min(m0 + 64 + W - 1, SK) (arith.maxsi / arith.minsi / arith.divsi)
// Grid: (ceil(SQ / 64), BH).

// Attention returning the log-sum-exp of each query row next to O:
// lse[bh, i] = log(sum_j exp(s_ij)), s = scale q k^T; from the running max (log2 units)
// and sum: (m + log2(l)) ln 2.
func.func @attention_lse(%q: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %lse: !tile.desc<?x?xf32, box = [1, 64]> {tile.dims = ["BH", "SQ"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
  %c0 = arith.constant 0 : index
  %b64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %scale_t = tile.splat %qk_scale : f32 -> tensor<64x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %m_f, %l_f, %acc_f = scf.for %n = %c0 to %seq_len step %b64 iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_s) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %k_tt = tile.trans %k_t : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %s_l = arith.mulf %s, %scale_t : tensor<64x64xf32>
    %s3 = tile.select %in_seq, %s_l, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %m_blk = tile.reduce max %s3, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %m_blk : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %s_shift = arith.subf %s3, %m_b : tensor<64x64xf32>
    %p = math.exp2 %s_shift : tensor<64x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<64xf32>
    %alpha = math.exp2 %m_diff : tensor<64xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<64xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x64xf32>
    %p_lo = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %ones = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<64xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x64xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<64x64xf32>
  %o_t = arith.truncf %o_f : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
  %log2_l = math.log2 %l_f : tensor<64xf32>
  %lse2 = arith.addf %m_f, %log2_l : tensor<64xf32>
  %ln2 = arith.constant 0.693147182 : f32
  %ln2_t = tile.splat %ln2 : f32 -> tensor<64xf32>
  %lse_t = arith.mulf %lse2, %ln2_t : tensor<64xf32>
  tile.store %lse_t, %lse[%bh, %m0] : tensor<64xf32> -> !tile.desc<?x?xf32, box = [1, 64]>
  func.return
}

// Key-padding mask from a loaded per-key vector: key j of row bh is kept where
// mask[bh, j] = 1 and dropped where it is 0 (an f32 vector loaded in the key loop next to
// K and V; as before i32 descriptors, and float tiles have no compare, so the mask is
// applied as a penalty: s + (mask - 1) 1e30).
func.func @attention_keymask(%q: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %mask: !tile.desc<?x?xf32, box = [1, 64]> {tile.dims = ["BH", "SK"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
  %c0 = arith.constant 0 : index
  %b64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %scale_t = tile.splat %qk_scale : f32 -> tensor<64x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %m_f, %l_f, %acc_f = scf.for %n = %c0 to %seq_len step %b64 iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_s) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %mk = tile.load %mask[%bh, %n] : !tile.desc<?x?xf32, box = [1, 64]> -> tensor<64xf32>
    %k_tt = tile.trans %k_t : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %one_k = arith.constant dense<1.000000e+00> : tensor<64xf32>
    %big = arith.constant dense<1.000000e+30> : tensor<64xf32>
    %drop = arith.subf %mk, %one_k : tensor<64xf32>
    %pen = arith.mulf %drop, %big : tensor<64xf32>
    %pen_row = tile.expand_dims %pen, axis = 0 : tensor<64xf32> -> tensor<1x64xf32>
    %pen_b = tile.broadcast %pen_row : tensor<1x64xf32> -> tensor<64x64xf32>
    %s_pen = arith.addf %s, %pen_b : tensor<64x64xf32>
    %s_l = arith.mulf %s_pen, %scale_t : tensor<64x64xf32>
    %s3 = tile.select %in_seq, %s_l, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %m_blk = tile.reduce max %s3, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %m_blk : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %s_shift = arith.subf %s3, %m_b : tensor<64x64xf32>
    %p = math.exp2 %s_shift : tensor<64x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<64xf32>
    %alpha = math.exp2 %m_diff : tensor<64xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<64xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x64xf32>
    %p_lo = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %ones = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<64xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x64xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<64x64xf32>
  %o_t = arith.truncf %o_f : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
  func.return
}

// A symmetric band without causality: query i sees keys j with |i - j| < W (W >= 1 a
// scalar, j < SK); the key loop covers only the blocks the band reaches.
func.func @attention_band(%q: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %window: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
  %c0 = arith.constant 0 : index
  %b64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %scale_t = tile.splat %qk_scale : f32 -> tensor<64x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %c1 = arith.constant 1 : index
  %w_i32 = arith.index_cast %window : index to i32
  %w_t = tile.splat %w_i32 : i32 -> tensor<64x64xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_col = tile.splat %m0_i32 : i32 -> tensor<64x1xi32>
  %row_iota = tile.expand_dims %col_iota_1d, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %row_ids = arith.addi %row_iota, %m0_col : tensor<64x1xi32>
  %rows_b = tile.broadcast %row_ids : tensor<64x1xi32> -> tensor<64x64xi32>
  %lo_raw = arith.subi %m0, %window : index
  %lo_raw1 = arith.addi %lo_raw, %c1 : index
  %lo_pos = arith.maxsi %lo_raw1, %c0 : index
  %lo_blk = arith.divsi %lo_pos, %b64 : index
  %lo = arith.muli %lo_blk, %b64 : index
  %hi_raw = arith.addi %m0, %b64 : index
  %hi_w = arith.addi %hi_raw, %window : index
  %hi_w1 = arith.subi %hi_w, %c1 : index
  %hi = arith.minsi %hi_w1, %seq_len : index
  %m_f, %l_f, %acc_f = scf.for %n = %lo to %hi step %b64 iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_s) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %k_tt = tile.trans %k_t : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %diff = arith.subi %rows_b, %cols_b : tensor<64x64xi32>
    %neg_diff = arith.subi %cols_b, %rows_b : tensor<64x64xi32>
    %dist = arith.maxsi %diff, %neg_diff : tensor<64x64xi32>
    %near = tile.cmpi slt, %dist, %w_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %ok = arith.andi %near, %in_seq : tensor<64x64xi1>
    %s_l = arith.mulf %s, %scale_t : tensor<64x64xf32>
    %s3 = tile.select %ok, %s_l, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %m_blk = tile.reduce max %s3, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %m_blk : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %s_shift = arith.subf %s3, %m_b : tensor<64x64xf32>
    %p = math.exp2 %s_shift : tensor<64x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<64xf32>
    %alpha = math.exp2 %m_diff : tensor<64xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<64xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x64xf32>
    %p_lo = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %ones = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<64xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x64xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<64x64xf32>
  %o_t = arith.truncf %o_f : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
  func.return
}
