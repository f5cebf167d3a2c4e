// Attention an outside user writes (the eighth sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py):
//   @attention_d16: O = bf16(softmax(scale Q K^T + kb[bh, n]) V) at head dim 16 (32-byte
//                   rows: one k16 step for Q K^T, an n16 wgmma for P V), Q scaled by
//                   scale log2(e) in registers before the loop (the first dot's A
//                   operand computed, not loaded) and a per-key additive bias row
//                   loaded each key block
// Grid: (ceil(SQ / 64), BH).

// O = bf16(softmax(scale Q K^T + kb[bh, n]) V) at head dim 16, Q scaled in registers.
func.func @attention_d16(%q: !tile.desc<?x?x16xbf16, box = [1, 64, 16]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x16xbf16, box = [1, 64, 16]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x16xbf16, box = [1, 64, 16]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x16xbf16, box = [1, 64, 16]> {tile.dims = ["BH", "SQ", "D"]},
    %kb: !tile.desc<?x?xf32, box = [1, 64]> {tile.dims = ["BH", "SK"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x16xbf16, box = [1, 64, 16]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_l = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x16xbf16, box = [1, 64, 16]> -> tensor<64x16xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  %qs_t = tile.splat %qk_scale : f32 -> tensor<64x16xf32>
  %q_f = arith.extf %q_l : tensor<64x16xbf16> to tensor<64x16xf32>
  %q_s = arith.mulf %q_f, %qs_t : tensor<64x16xf32>
  %q_t = arith.truncf %q_s : tensor<64x16xf32> to tensor<64x16xbf16>
  %log2e_t = tile.splat %log2e : f32 -> tensor<64x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %zero_o = arith.constant dense<0.000000e+00> : tensor<64x16xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %m_f, %l_f, %acc_f = scf.for %n = %c0 to %seq_len step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_o) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x16xbf16, box = [1, 64, 16]> -> tensor<64x16xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x16xbf16, box = [1, 64, 16]> -> tensor<64x16xbf16>
    %k_tt = tile.trans %k_t : tensor<64x16xbf16> -> tensor<16x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x16xbf16>, tensor<16x64xbf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %kb_t = tile.load %kb[%bh, %n] : !tile.desc<?x?xf32, box = [1, 64]> -> tensor<64xf32>
    %kb_r = tile.expand_dims %kb_t, axis = 0 : tensor<64xf32> -> tensor<1x64xf32>
    %kb_b = tile.broadcast %kb_r : tensor<1x64xf32> -> tensor<64x64xf32>
    %kb_2 = arith.mulf %kb_b, %log2e_t : tensor<64x64xf32>
    %s_scaled = arith.addf %s, %kb_2 : tensor<64x64xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<64x1xf32> -> tensor<64x16xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<64x16xf32>
    %p_lo = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x64xbf16>, tensor<64x16xbf16> -> tensor<64x16xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>
  }
  %ones = arith.constant dense<1.000000e+00> : tensor<64xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<64xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x16xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<64x16xf32>
  %o_t = arith.truncf %o_f : tensor<64x16xf32> to tensor<64x16xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<64x16xbf16> -> !tile.desc<?x?x16xbf16, box = [1, 64, 16]>
  func.return
}
