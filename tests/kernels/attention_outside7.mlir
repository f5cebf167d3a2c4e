// Attention an outside user writes (the seventh sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py): 64-row query blocks, 64-key blocks.
//   @attention_mqa_causal: multi-query attention (one K/V head per batch, shared by the
//                          `heads` query heads: the K/V row is program_id(y) / heads,
//                          arith.divui), causal, head dim 128, returning the log-sum-exp
//                          of each query row as a second output
//   @attention_softcap_window: f16 attention with logit soft-capping, cap tanh(s / cap),
//                          and a sliding window (i - W < j <= i) whose key loop skips the
//                          blocks left of the window, an f16 output
//   @attention_d48:        head dim 48: 96-byte rows, no power-of-two swizzle span,
//                          every key (the fifth sweep's @attention_d32 at D = 48)
// Grid: (ceil(SQ / 64), BH).

// MQA: O[bh] = softmax(scale Q[bh] K[b]^T, causal) V[b], b = bh / heads; lse[bh, i] =
// log(sum_j exp(s_ij)) over the keys row i sees.
func.func @attention_mqa_causal(%q: !tile.desc<?x?x128xbf16, box = [1, 64, 128]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x128xbf16, box = [1, 64, 128]> {tile.dims = ["B", "SK", "D"]},
    %v: !tile.desc<?x?x128xbf16, box = [1, 64, 128]> {tile.dims = ["B", "SK", "D"]},
    %o: !tile.desc<?x?x128xbf16, box = [1, 64, 128]> {tile.dims = ["BH", "SQ", "D"]},
    %lse: !tile.desc<?x?xf32, box = [1, 64]> {tile.dims = ["BH", "SQ"]},
    %sm_scale: f32, %heads: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %kv = arith.divui %bh, %heads : index
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x128xbf16, box = [1, 64, 128]>
  %c0 = arith.constant 0 : index
  %b64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x128xbf16, box = [1, 64, 128]> -> tensor<64x128xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %scale_t = tile.splat %qk_scale : f32 -> tensor<64x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %zero_o = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_col = tile.splat %m0_i32 : i32 -> tensor<64x1xi32>
  %row_iota_1d = tile.iota : tensor<64xi32>
  %row_iota = tile.expand_dims %row_iota_1d, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %row_ids = arith.addi %row_iota, %m0_col : tensor<64x1xi32>
  %rows_b = tile.broadcast %row_ids : tensor<64x1xi32> -> tensor<64x64xi32>
  %diag_end = arith.addi %m0, %b64 : index
  %hi = arith.minui %diag_end, %seq_len : index
  %m_f, %l_f, %acc_f = scf.for %n = %c0 to %hi step %b64 iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_o) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x128xf32>) {
    %k_t = tile.load %k[%kv, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 64, 128]> -> tensor<64x128xbf16>
    %v_t = tile.load %v[%kv, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 64, 128]> -> tensor<64x128xbf16>
    %k_tt = tile.trans %k_t : tensor<64x128xbf16> -> tensor<128x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x128xbf16>, tensor<128x64xbf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %causal = tile.cmpi sle, %cols_b, %rows_b : tensor<64x64xi32> -> tensor<64x64xi1>
    %s_scaled = arith.mulf %s, %scale_t : tensor<64x64xf32>
    %s1 = tile.select %in_seq, %s_scaled, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %s2 = tile.select %causal, %s1, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %m_blk = tile.reduce max %s2, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %m_blk : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %s_shift = arith.subf %s2, %m_b : tensor<64x64xf32>
    %p = math.exp2 %s_shift : tensor<64x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<64xf32>
    %alpha = math.exp2 %m_diff : tensor<64xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<64xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<64x1xf32> -> tensor<64x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x128xf32>
    %p_lo = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x128xf32>
  }
  %ones = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<64xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x128xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<64x128xf32>
  %o_t = arith.truncf %o_f : tensor<64x128xf32> to tensor<64x128xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<64x128xbf16> -> !tile.desc<?x?x128xbf16, box = [1, 64, 128]>
  %log2_l = math.log2 %l_f : tensor<64xf32>
  %lse2 = arith.addf %m_f, %log2_l : tensor<64xf32>
  %ln2 = arith.constant 0.693147182 : f32
  %ln2_t = tile.splat %ln2 : f32 -> tensor<64xf32>
  %lse_t = arith.mulf %lse2, %ln2_t : tensor<64xf32>
  tile.store %lse_t, %lse[%bh, %m0] : tensor<64xf32> -> !tile.desc<?x?xf32, box = [1, 64]>
  func.return
}

// f16 sliding-window attention with soft-capped logits: s = cap tanh(scale q k^T / cap),
// query i sees keys i - W < j <= i; the key loop starts at the window's first block.
func.func @attention_softcap_window(%q: !tile.desc<?x?x64xf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x64xf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x64xf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %cap: f32, %window: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xf16, box = [1, 64, 64]>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xf16, box = [1, 64, 64]> -> tensor<64x64xf16>
  %one = arith.constant 1.0 : f32
  %inv_cap = arith.divf %one, %cap : f32
  %pre = arith.mulf %sm_scale, %inv_cap : f32
  %pre_t = tile.splat %pre : f32 -> tensor<64x64xf32>
  %log2e = arith.constant 1.44269502 : f32
  %post = arith.mulf %cap, %log2e : f32
  %post_t = tile.splat %post : f32 -> tensor<64x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x64xi32>
  %w_i32 = arith.index_cast %window : index to i32
  %w_t = tile.splat %w_i32 : i32 -> tensor<64x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_col = tile.splat %m0_i32 : i32 -> tensor<64x1xi32>
  %row_iota_1d = tile.iota : tensor<64xi32>
  %row_iota = tile.expand_dims %row_iota_1d, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %row_ids = arith.addi %row_iota, %m0_col : tensor<64x1xi32>
  %rows_b = tile.broadcast %row_ids : tensor<64x1xi32> -> tensor<64x64xi32>
  %lowest = arith.subi %rows_b, %w_t : tensor<64x64xi32>
  %m1 = arith.addi %m0, %c1 : index
  %lo_raw = arith.subi %m1, %window : index
  %lo_pos = arith.maxsi %lo_raw, %c0 : index
  %lo_blk = arith.divui %lo_pos, %b64 : index
  %lo = arith.muli %lo_blk, %b64 : index
  %diag_end = arith.addi %m0, %b64 : index
  %hi = arith.minui %diag_end, %seq_len : index
  %m_f, %l_f, %acc_f = scf.for %n = %lo to %hi step %b64 iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_s) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xf16, box = [1, 64, 64]> -> tensor<64x64xf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xf16, box = [1, 64, 64]> -> tensor<64x64xf16>
    %k_tt = tile.trans %k_t : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %causal = tile.cmpi sle, %cols_b, %rows_b : tensor<64x64xi32> -> tensor<64x64xi1>
    %in_win = tile.cmpi sgt, %cols_b, %lowest : tensor<64x64xi32> -> tensor<64x64xi1>
    %s_pre = arith.mulf %s, %pre_t : tensor<64x64xf32>
    %s_tanh = math.tanh %s_pre : tensor<64x64xf32>
    %s_cap = arith.mulf %s_tanh, %post_t : tensor<64x64xf32>
    %s1 = tile.select %in_seq, %s_cap, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %s2 = tile.select %causal, %s1, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %s3 = tile.select %in_win, %s2, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
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
    %p_lo = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %ones = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<64xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x64xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<64x64xf32>
  %o_t = arith.truncf %o_f : tensor<64x64xf32> to tensor<64x64xf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<64x64xf16> -> !tile.desc<?x?x64xf16, box = [1, 64, 64]>
  func.return
}

// O = bf16(softmax(scale Q K^T) V) at head dim 48.
func.func @attention_d48(%q: !tile.desc<?x?x48xbf16, box = [1, 64, 48]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x48xbf16, box = [1, 64, 48]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x48xbf16, box = [1, 64, 48]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x48xbf16, box = [1, 64, 48]> {tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x48xbf16, box = [1, 64, 48]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x48xbf16, box = [1, 64, 48]> -> tensor<64x48xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %scale_t = tile.splat %qk_scale : f32 -> tensor<64x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %zero_o = arith.constant dense<0.000000e+00> : tensor<64x48xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %m_f, %l_f, %acc_f = scf.for %n = %c0 to %seq_len step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_o) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x48xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x48xbf16, box = [1, 64, 48]> -> tensor<64x48xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x48xbf16, box = [1, 64, 48]> -> tensor<64x48xbf16>
    %k_tt = tile.trans %k_t : tensor<64x48xbf16> -> tensor<48x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x48xbf16>, tensor<48x64xbf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %s_scaled = arith.mulf %s, %scale_t : tensor<64x64xf32>
    %s1 = tile.select %in_seq, %s_scaled, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %m_blk = tile.reduce max %s1, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %m_blk : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %s_shift = arith.subf %s1, %m_b : tensor<64x64xf32>
    %p = math.exp2 %s_shift : tensor<64x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<64xf32>
    %alpha = math.exp2 %m_diff : tensor<64xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<64xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<64x1xf32> -> tensor<64x48xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x48xf32>
    %p_lo = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x64xbf16>, tensor<64x48xbf16> -> tensor<64x48xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x48xf32>
  }
  %ones = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<64xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x48xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<64x48xf32>
  %o_t = arith.truncf %o_f : tensor<64x48xf32> to tensor<64x48xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<64x48xbf16> -> !tile.desc<?x?x48xbf16, box = [1, 64, 48]>
  func.return
}
