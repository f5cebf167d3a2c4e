// Attention an outside user writes (the fifth sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py): FlashAttention forward, every key, 64-row query blocks.
//   @attention_d32:   head dim 32 (64-byte rows, swizzled at that width), 64-key blocks
//   @attention_kv128: head dim 64, 128-key blocks (64 x 128 logit tiles), an f32 output
// Grid: (ceil(SQ / 64), BH).

// O = bf16(softmax(scale Q K^T) V) at head dim 32.
func.func @attention_d32(%q: !tile.desc<?x?x32xbf16, box = [1, 64, 32]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x32xbf16, box = [1, 64, 32]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x32xbf16, box = [1, 64, 32]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x32xbf16, box = [1, 64, 32]> {tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x32xbf16, box = [1, 64, 32]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x32xbf16, box = [1, 64, 32]> -> tensor<64x32xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %scale_t = tile.splat %qk_scale : f32 -> tensor<64x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %zero_o = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %m_f, %l_f, %acc_f = scf.for %n = %c0 to %seq_len step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_o) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x32xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x32xbf16, box = [1, 64, 32]> -> tensor<64x32xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x32xbf16, box = [1, 64, 32]> -> tensor<64x32xbf16>
    %k_tt = tile.trans %k_t : tensor<64x32xbf16> -> tensor<32x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<64x1xf32> -> tensor<64x32xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x32xf32>
    %p_lo = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x64xbf16>, tensor<64x32xbf16> -> tensor<64x32xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x32xf32>
  }
  %ones = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<64xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x32xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<64x32xf32>
  %o_t = arith.truncf %o_f : tensor<64x32xf32> to tensor<64x32xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<64x32xbf16> -> !tile.desc<?x?x32xbf16, box = [1, 64, 32]>
  func.return
}

// O = softmax(scale Q K^T) V in f32, 128 keys a block.
func.func @attention_kv128(%q: !tile.desc<?x?x64xbf16, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x64xf32, box = [1, 64, 64]> {tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xbf16, box = [1, 128, 64]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %scale_t = tile.splat %qk_scale : f32 -> tensor<64x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %zero_o = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %m_f, %l_f, %acc_f = scf.for %n = %c0 to %seq_len step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_o) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %k_tt = tile.trans %k_t : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x128xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x128xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x128xi32> -> tensor<64x128xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x128xi32> -> tensor<64x128xi1>
    %s_scaled = arith.mulf %s, %scale_t : tensor<64x128xf32>
    %s1 = tile.select %in_seq, %s_scaled, %neg_inf : tensor<64x128xi1>, tensor<64x128xf32>
    %m_blk = tile.reduce max %s1, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %m_blk : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x128xf32>
    %s_shift = arith.subf %s1, %m_b : tensor<64x128xf32>
    %p = math.exp2 %s_shift : tensor<64x128xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<64xf32>
    %alpha = math.exp2 %m_diff : tensor<64xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<64xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x64xf32>
    %p_lo = arith.truncf %p : tensor<64x128xf32> to tensor<64x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x128xbf16>, tensor<128x64xbf16> -> tensor<64x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>
  }
  %ones = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<64xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x64xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<64x64xf32>
  tile.store %o_f, %o[%bh, %m0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?x64xf32, box = [1, 64, 64]>
  func.return
}
