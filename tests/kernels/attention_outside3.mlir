// FlashAttention forward at head dim 192 (the third sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py), written by examples/make_attention.py's template
// (`kernel(192, "bf16", causal, 128, 64)`; its header in examples/attention.mlir says
// what each computes): 128-row query blocks, 64-key blocks, a 128 x 192 f32
// accumulator in two consumer warpgroups; each 192-element row is one TMA box of
// 384 bytes (three 128-byte swizzle chunks). Head dim 96 (192-byte rows) is
// refused at the load (tests/filecheck/lowering/invalid.mlir).
//   @attention_d192:        every key
//   @attention_causal_d192: keys up to the query position
// Grid: (ceil(SQ / 128), BH).

func.func @attention_d192(%q: !tile.desc<?x?x192xbf16, box = [1, 128, 192]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x192xbf16, box = [1, 64, 192]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x192xbf16, box = [1, 64, 192]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x192xbf16, box = [1, 128, 192]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x192xbf16, box = [1, 64, 192]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 64 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x192xbf16, box = [1, 128, 192]> -> tensor<128x192xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  // the running max moves in steps of 8 (log2 units)
  %max_step = arith.constant 8.0 : f32
  %per_max_step = arith.constant 0.125 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x192xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  // key blocks wholly inside the sequence need no mask
  %seq_blocks = arith.divui %seq_len, %bn : index
  %full_end = arith.muli %seq_blocks, %bn : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x192xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x192xbf16, box = [1, 64, 192]> -> tensor<64x192xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x192xbf16, box = [1, 64, 192]> -> tensor<64x192xbf16>
    %k_tt = tile.trans %k_t : tensor<64x192xbf16> -> tensor<192x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x192xbf16>, tensor<192x64xbf16> -> tensor<128x64xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %s_scaled = arith.mulf %s, %scale_t : tensor<128x64xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x64xf32>
    %p = math.exp2 %s_shift : tensor<128x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x192xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x192xf32>
    %p_lo = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x64xbf16>, tensor<64x192xbf16> -> tensor<128x192xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x192xf32>
  }
  // the last, partial block (if any): sequence-length mask
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %seq_len step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x192xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x192xbf16, box = [1, 64, 192]> -> tensor<64x192xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x192xbf16, box = [1, 64, 192]> -> tensor<64x192xbf16>
    %k_tt = tile.trans %k_t : tensor<64x192xbf16> -> tensor<192x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x192xbf16>, tensor<192x64xbf16> -> tensor<128x64xf32>
    // keys past the sequence end score -inf
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<128x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<128x64xi32> -> tensor<128x64xi1>
    %s_len = tile.select %in_seq, %s, %neg_inf : tensor<128x64xi1>, tensor<128x64xf32>
    %m_blk = tile.reduce max %s_len, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %s_scaled = arith.mulf %s_len, %scale_t : tensor<128x64xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x64xf32>
    %p = math.exp2 %s_shift : tensor<128x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x192xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x192xf32>
    %p_lo = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x64xbf16>, tensor<64x192xbf16> -> tensor<128x192xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x192xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x192xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x192xf32>
  %o_t = arith.truncf %o_f : tensor<128x192xf32> to tensor<128x192xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x192xbf16> -> !tile.desc<?x?x192xbf16, box = [1, 128, 192]>
  func.return
}

func.func @attention_causal_d192(%q: !tile.desc<?x?x192xbf16, box = [1, 128, 192]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x192xbf16, box = [1, 64, 192]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x192xbf16, box = [1, 64, 192]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x192xbf16, box = [1, 128, 192]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x192xbf16, box = [1, 64, 192]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 64 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x192xbf16, box = [1, 128, 192]> -> tensor<128x192xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  // the running max moves in steps of 8 (log2 units)
  %max_step = arith.constant 8.0 : f32
  %per_max_step = arith.constant 0.125 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x192xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x64xi32>
  %col_iota_1d = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_col = tile.splat %m0_i32 : i32 -> tensor<128x1xi32>
  %row_iota_1d = tile.iota : tensor<128xi32>
  %row_iota = tile.expand_dims %row_iota_1d, axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %row_ids = arith.addi %row_iota, %m0_col : tensor<128x1xi32>
  %m0_in = arith.minui %m0, %seq_len : index
  %rows_b = tile.broadcast %row_ids : tensor<128x1xi32> -> tensor<128x64xi32>
  // key blocks wholly left of the query block need no mask
  %m0_blocks = arith.divui %m0_in, %bn : index
  %full_end = arith.muli %m0_blocks, %bn : index
  %diag_end = arith.addi %m0, %bm : index
  %kv_end = arith.minui %diag_end, %seq_len : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x192xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x192xbf16, box = [1, 64, 192]> -> tensor<64x192xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x192xbf16, box = [1, 64, 192]> -> tensor<64x192xbf16>
    %k_tt = tile.trans %k_t : tensor<64x192xbf16> -> tensor<192x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x192xbf16>, tensor<192x64xbf16> -> tensor<128x64xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %s_scaled = arith.mulf %s, %scale_t : tensor<128x64xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x64xf32>
    %p = math.exp2 %s_shift : tensor<128x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x192xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x192xf32>
    %p_lo = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x64xbf16>, tensor<64x192xbf16> -> tensor<128x192xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x192xf32>
  }
  // the diagonal blocks: causal and sequence-length masks
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %kv_end step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x192xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x192xbf16, box = [1, 64, 192]> -> tensor<64x192xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x192xbf16, box = [1, 64, 192]> -> tensor<64x192xbf16>
    %k_tt = tile.trans %k_t : tensor<64x192xbf16> -> tensor<192x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x192xbf16>, tensor<192x64xbf16> -> tensor<128x64xf32>
    // keys past the sequence end and keys after the query score -inf
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<128x64xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<128x64xi32> -> tensor<128x64xi1>
    %s_len = tile.select %in_seq, %s, %neg_inf : tensor<128x64xi1>, tensor<128x64xf32>
    %causal = tile.cmpi sle, %cols_b, %rows_b : tensor<128x64xi32> -> tensor<128x64xi1>
    %s_causal = tile.select %causal, %s_len, %neg_inf : tensor<128x64xi1>, tensor<128x64xf32>
    %m_blk = tile.reduce max %s_causal, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %s_scaled = arith.mulf %s_causal, %scale_t : tensor<128x64xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x64xf32>
    %p = math.exp2 %s_shift : tensor<128x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x192xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x192xf32>
    %p_lo = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x64xbf16>, tensor<64x192xbf16> -> tensor<128x192xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x192xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x192xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x192xf32>
  %o_t = arith.truncf %o_f : tensor<128x192xf32> to tensor<128x192xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x192xbf16> -> !tile.desc<?x?x192xbf16, box = [1, 128, 192]>
  func.return
}
