// Attention an outside user writes (the second sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py): 64-row query blocks, 64-key blocks, head dim 64.
//   @attention_softcap: Gemma 2's logit soft-capping, s = cap tanh(s scale / cap)
//   @attention_alibi:   ALiBi, s = s scale - slope_h |i - j|, slope_h = 2^(-8 (h + 1) / H)
//                       computed from the head's program id and H (a scalar), the
//                       distance converted with tile.sitofp
//   @attention_cross:   cross-attention, SQ != SK, keys at or past `kv_len` (a scalar,
//                       one key-padding length for the launch) masked, masks combined
//                       with arith.andi
//   @attention_bhsd:    Q, K, V, O stored [B, H, S, D]: batch and head separate grid axes
// Grids: (ceil(SQ / 64), BH) (@attention_bhsd: (ceil(S / 64), H, B)).

// Logit soft-capping (Gemma 2): s = cap tanh(s scale / cap), then softmax.
func.func @attention_softcap(%q: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %cap: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
  %c0 = arith.constant 0 : index
  %b64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %log2e_t = tile.splat %log2e : f32 -> tensor<64x64xf32>
  %scale_t = tile.splat %sm_scale : f32 -> tensor<64x64xf32>
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
  %inv_cap = arith.divf %sm_scale, %cap : f32
  %inv_cap_t = tile.splat %inv_cap : f32 -> tensor<64x64xf32>
  %cap_l = arith.mulf %cap, %log2e : f32
  %cap_t = tile.splat %cap_l : f32 -> tensor<64x64xf32>
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
    %s_c = arith.mulf %s, %inv_cap_t : tensor<64x64xf32>
    %s_th = math.tanh %s_c : tensor<64x64xf32>
    %s_l = arith.mulf %s_th, %cap_t : tensor<64x64xf32>
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

// ALiBi: s = s scale - slope_h |i - j|, slope_h = 2^(-8 (h + 1) / H), H = %heads (BH = batch * H).
func.func @attention_alibi(%q: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %heads: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
  %c0 = arith.constant 0 : index
  %b64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %log2e_t = tile.splat %log2e : f32 -> tensor<64x64xf32>
  %scale_t = tile.splat %sm_scale : f32 -> tensor<64x64xf32>
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
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_col = tile.splat %m0_i32 : i32 -> tensor<64x1xi32>
  %row_iota_1d = tile.iota : tensor<64xi32>
  %row_iota = tile.expand_dims %row_iota_1d, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %row_ids = arith.addi %row_iota, %m0_col : tensor<64x1xi32>
  %rows_b = tile.broadcast %row_ids : tensor<64x1xi32> -> tensor<64x64xi32>
  %h = arith.remui %bh, %heads : index
  %c1 = arith.constant 1 : index
  %h1 = arith.addi %h, %c1 : index
  %h1_i32 = arith.index_cast %h1 : index to i32
  %h1_f = arith.sitofp %h1_i32 : i32 to f32
  %heads_i32 = arith.index_cast %heads : index to i32
  %heads_f = arith.sitofp %heads_i32 : i32 to f32
  %minus8 = arith.constant -8.0 : f32
  %e0 = arith.mulf %h1_f, %minus8 : f32
  %e1 = arith.divf %e0, %heads_f : f32
  %slope = math.exp2 %e1 : f32
  %slope_l = arith.mulf %slope, %log2e : f32
  %slope_t = tile.splat %slope_l : f32 -> tensor<64x64xf32>
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
    %dist_i = arith.subi %rows_b, %cols_b : tensor<64x64xi32>
    %dist_f = tile.sitofp %dist_i : tensor<64x64xi32> -> tensor<64x64xf32>
    %dist = math.absf %dist_f : tensor<64x64xf32>
    %pen = arith.mulf %dist, %slope_t : tensor<64x64xf32>
    %s_sc = arith.mulf %s, %scale_t : tensor<64x64xf32>
    %s_e = arith.mulf %s_sc, %log2e_t : tensor<64x64xf32>
    %s_l = arith.subf %s_e, %pen : tensor<64x64xf32>
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

// Cross-attention: SQ != SK, keys j >= kv_len (a scalar) masked; the loop stops at min(kv_len, SK).
func.func @attention_cross(%q: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %kv_len: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
  %c0 = arith.constant 0 : index
  %b64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %log2e_t = tile.splat %log2e : f32 -> tensor<64x64xf32>
  %scale_t = tile.splat %sm_scale : f32 -> tensor<64x64xf32>
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
  %kv_i32 = arith.index_cast %kv_len : index to i32
  %kv_t = tile.splat %kv_i32 : i32 -> tensor<64x64xi32>
  %end = arith.minui %kv_len, %seq_len : index
  %m_f, %l_f, %acc_f = scf.for %n = %c0 to %end step %b64 iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_s) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %k_tt = tile.trans %k_t : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %in_kv = tile.cmpi slt, %cols_b, %kv_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %keep = arith.andi %in_seq, %in_kv : tensor<64x64xi1>
    %s_sc = arith.mulf %s, %scale_t : tensor<64x64xf32>
    %s_l = arith.mulf %s_sc, %log2e_t : tensor<64x64xf32>
    %s3 = tile.select %keep, %s_l, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
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

// [B, H, S, D] tensors: query block on x, head on y, batch on z.
func.func @attention_bhsd(%q: !tile.desc<?x?x?x64xbf16, box = [1, 1, 64, 64]> {tile.dims = ["B", "H", "S", "D"]},
    %k: !tile.desc<?x?x?x64xbf16, box = [1, 1, 64, 64]> {tile.dims = ["B", "H", "S", "D"]},
    %v: !tile.desc<?x?x?x64xbf16, box = [1, 1, 64, 64]> {tile.dims = ["B", "H", "S", "D"]},
    %o: !tile.desc<?x?x?x64xbf16, box = [1, 1, 64, 64]> {tile.dims = ["B", "H", "S", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %hd = tile.program_id y
  %bz = tile.program_id z
  %seq_len = tile.dim %k, 2 : !tile.desc<?x?x?x64xbf16, box = [1, 1, 64, 64]>
  %c0 = arith.constant 0 : index
  %b64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bz, %hd, %m0, %c0] : !tile.desc<?x?x?x64xbf16, box = [1, 1, 64, 64]> -> tensor<64x64xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %log2e_t = tile.splat %log2e : f32 -> tensor<64x64xf32>
  %scale_t = tile.splat %sm_scale : f32 -> tensor<64x64xf32>
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
    %k_t = tile.load %k[%bz, %hd, %n, %c0] : !tile.desc<?x?x?x64xbf16, box = [1, 1, 64, 64]> -> tensor<64x64xbf16>
    %v_t = tile.load %v[%bz, %hd, %n, %c0] : !tile.desc<?x?x?x64xbf16, box = [1, 1, 64, 64]> -> tensor<64x64xbf16>
    %k_tt = tile.trans %k_t : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %s_sc = arith.mulf %s, %scale_t : tensor<64x64xf32>
    %s_l = arith.mulf %s_sc, %log2e_t : tensor<64x64xf32>
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
  tile.store %o_t, %o[%bz, %hd, %m0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?x?x64xbf16, box = [1, 1, 64, 64]>
  func.return
}
