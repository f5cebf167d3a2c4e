// FlashAttention forward: O = softmax(Q K^T * sm_scale) V, one program per (BM-query
// block, batch * head). Q and O are [BH, SQ, D], K and V [BH, SK, D] bf16 tensors
// (tile.dims: BH = batch * heads, SQ / SK = query / key length, D = head dim; a call
// whose extents disagree is refused). The key loop walks BN-key blocks keeping the
// online-softmax state: the running row max m, the running row sum l and the
// unnormalised output acc, rescaled by alpha = exp2(m_old - m_new) whenever m
// grows. m is kept in log2 units (scores times scale = sm_scale * log2(e)) and
// rounded down to a multiple of 8, so it moves only when a row's max crosses a
// factor of 256: alpha is then exactly 1 for almost every block, and the PTX
// printer skips multiplying acc by a warp's ones. The probabilities
// exp2(s * scale - m), one fused multiply-add per score, lie below 256 with the
// largest at least 1: no bf16 or f16 overflow, and no more underflow than with
// the exact max. SQ may differ from SK: the causal kernels let query i see keys 0..i.
// BM = 128, BN = 128 are named (tile.box, tile.size), so `tile-shape{block-m=..
// block-n=..}` can resize them. Launch grid: (ceil(SQ / BM), BH).
// Head dims 80 and 96: rows of 160 and 192 bytes, which 128-byte swizzle chunks do
// not divide, are moved (TMA) and read (wgmma) in chunks of the widest swizzle
// span that divides them: five 32-byte chunks, three 64-byte ones.
//
//   @attention_d80, @attention_d96:
//     every key; the blocks wholly inside the sequence run unmasked, the last
//     partial block masks keys past seq_len.
//   @attention_causal_d80, @attention_causal_d96:
//     keys up to the query position; the blocks left of the query block run
//     unmasked, the rest with the causal and sequence-length masks.

func.func @attention_d80(%q: !tile.desc<?x?x80xbf16, box = [1, 128, 80]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x80xbf16, box = [1, 128, 80]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x80xbf16, box = [1, 128, 80]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x80xbf16, box = [1, 128, 80]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x80xbf16, box = [1, 128, 80]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  // the running max moves in steps of 8 (log2 units)
  %max_step = arith.constant 8.0 : f32
  %per_max_step = arith.constant 0.125 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x80xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // key blocks wholly inside the sequence need no mask
  %seq_blocks = arith.divui %seq_len, %bn : index
  %full_end = arith.muli %seq_blocks, %bn : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x80xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
    %k_tt = tile.trans %k_t : tensor<128x80xbf16> -> tensor<80x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x80xbf16>, tensor<80x128xbf16> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %s_scaled = arith.mulf %s, %scale_t : tensor<128x128xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x128xf32>
    %p = math.exp2 %s_shift : tensor<128x128xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x80xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x80xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x80xbf16> -> tensor<128x80xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x80xf32>
  }
  // the last, partial block (if any): sequence-length mask
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %seq_len step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x80xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
    %k_tt = tile.trans %k_t : tensor<128x80xbf16> -> tensor<80x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x80xbf16>, tensor<80x128xbf16> -> tensor<128x128xf32>
    // keys past the sequence end score -inf
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x128xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x128xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x128xi32> -> tensor<128x128xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<128x128xi32> -> tensor<128x128xi1>
    %s_len = tile.select %in_seq, %s, %neg_inf : tensor<128x128xi1>, tensor<128x128xf32>
    %m_blk = tile.reduce max %s_len, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %s_scaled = arith.mulf %s_len, %scale_t : tensor<128x128xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x128xf32>
    %p = math.exp2 %s_shift : tensor<128x128xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x80xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x80xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x80xbf16> -> tensor<128x80xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x80xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x80xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x80xf32>
  %o_t = arith.truncf %o_f : tensor<128x80xf32> to tensor<128x80xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x80xbf16> -> !tile.desc<?x?x80xbf16, box = [1, 128, 80]>
  func.return
}

func.func @attention_causal_d80(%q: !tile.desc<?x?x80xbf16, box = [1, 128, 80]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x80xbf16, box = [1, 128, 80]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x80xbf16, box = [1, 128, 80]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x80xbf16, box = [1, 128, 80]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x80xbf16, box = [1, 128, 80]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  // the running max moves in steps of 8 (log2 units)
  %max_step = arith.constant 8.0 : f32
  %per_max_step = arith.constant 0.125 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x80xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_col = tile.splat %m0_i32 : i32 -> tensor<128x1xi32>
  %row_iota_1d = tile.iota : tensor<128xi32>
  %row_iota = tile.expand_dims %row_iota_1d, axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %row_ids = arith.addi %row_iota, %m0_col : tensor<128x1xi32>
  %m0_in = arith.minui %m0, %seq_len : index
  %rows_b = tile.broadcast %row_ids : tensor<128x1xi32> -> tensor<128x128xi32>
  // key blocks wholly left of the query block need no mask
  %m0_blocks = arith.divui %m0_in, %bn : index
  %full_end = arith.muli %m0_blocks, %bn : index
  %diag_end = arith.addi %m0, %bm : index
  %kv_end = arith.minui %diag_end, %seq_len : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x80xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
    %k_tt = tile.trans %k_t : tensor<128x80xbf16> -> tensor<80x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x80xbf16>, tensor<80x128xbf16> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %s_scaled = arith.mulf %s, %scale_t : tensor<128x128xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x128xf32>
    %p = math.exp2 %s_shift : tensor<128x128xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x80xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x80xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x80xbf16> -> tensor<128x80xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x80xf32>
  }
  // the diagonal blocks: causal and sequence-length masks
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %kv_end step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x80xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x80xbf16, box = [1, 128, 80]> -> tensor<128x80xbf16>
    %k_tt = tile.trans %k_t : tensor<128x80xbf16> -> tensor<80x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x80xbf16>, tensor<80x128xbf16> -> tensor<128x128xf32>
    // keys past the sequence end and keys after the query score -inf
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x128xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x128xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x128xi32> -> tensor<128x128xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<128x128xi32> -> tensor<128x128xi1>
    %s_len = tile.select %in_seq, %s, %neg_inf : tensor<128x128xi1>, tensor<128x128xf32>
    %causal = tile.cmpi sle, %cols_b, %rows_b : tensor<128x128xi32> -> tensor<128x128xi1>
    %s_causal = tile.select %causal, %s_len, %neg_inf : tensor<128x128xi1>, tensor<128x128xf32>
    %m_blk = tile.reduce max %s_causal, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %s_scaled = arith.mulf %s_causal, %scale_t : tensor<128x128xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x128xf32>
    %p = math.exp2 %s_shift : tensor<128x128xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x80xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x80xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x80xbf16> -> tensor<128x80xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x80xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x80xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x80xf32>
  %o_t = arith.truncf %o_f : tensor<128x80xf32> to tensor<128x80xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x80xbf16> -> !tile.desc<?x?x80xbf16, box = [1, 128, 80]>
  func.return
}

func.func @attention_d96(%q: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x96xbf16, box = [1, 128, 96]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  // the running max moves in steps of 8 (log2 units)
  %max_step = arith.constant 8.0 : f32
  %per_max_step = arith.constant 0.125 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x96xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // key blocks wholly inside the sequence need no mask
  %seq_blocks = arith.divui %seq_len, %bn : index
  %full_end = arith.muli %seq_blocks, %bn : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
    %k_tt = tile.trans %k_t : tensor<128x96xbf16> -> tensor<96x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x96xbf16>, tensor<96x128xbf16> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %s_scaled = arith.mulf %s, %scale_t : tensor<128x128xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x128xf32>
    %p = math.exp2 %s_shift : tensor<128x128xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x96xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x96xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x96xbf16> -> tensor<128x96xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>
  }
  // the last, partial block (if any): sequence-length mask
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %seq_len step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
    %k_tt = tile.trans %k_t : tensor<128x96xbf16> -> tensor<96x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x96xbf16>, tensor<96x128xbf16> -> tensor<128x128xf32>
    // keys past the sequence end score -inf
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x128xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x128xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x128xi32> -> tensor<128x128xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<128x128xi32> -> tensor<128x128xi1>
    %s_len = tile.select %in_seq, %s, %neg_inf : tensor<128x128xi1>, tensor<128x128xf32>
    %m_blk = tile.reduce max %s_len, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %s_scaled = arith.mulf %s_len, %scale_t : tensor<128x128xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x128xf32>
    %p = math.exp2 %s_shift : tensor<128x128xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x96xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x96xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x96xbf16> -> tensor<128x96xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x96xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x96xf32>
  %o_t = arith.truncf %o_f : tensor<128x96xf32> to tensor<128x96xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x96xbf16> -> !tile.desc<?x?x96xbf16, box = [1, 128, 96]>
  func.return
}

func.func @attention_causal_d96(%q: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x96xbf16, box = [1, 128, 96]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
  %log2e = arith.constant 1.44269502 : f32
  %qk_scale = arith.mulf %sm_scale, %log2e : f32
  // the running max moves in steps of 8 (log2 units)
  %max_step = arith.constant 8.0 : f32
  %per_max_step = arith.constant 0.125 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x96xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_col = tile.splat %m0_i32 : i32 -> tensor<128x1xi32>
  %row_iota_1d = tile.iota : tensor<128xi32>
  %row_iota = tile.expand_dims %row_iota_1d, axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %row_ids = arith.addi %row_iota, %m0_col : tensor<128x1xi32>
  %m0_in = arith.minui %m0, %seq_len : index
  %rows_b = tile.broadcast %row_ids : tensor<128x1xi32> -> tensor<128x128xi32>
  // key blocks wholly left of the query block need no mask
  %m0_blocks = arith.divui %m0_in, %bn : index
  %full_end = arith.muli %m0_blocks, %bn : index
  %diag_end = arith.addi %m0, %bm : index
  %kv_end = arith.minui %diag_end, %seq_len : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
    %k_tt = tile.trans %k_t : tensor<128x96xbf16> -> tensor<96x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x96xbf16>, tensor<96x128xbf16> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %s_scaled = arith.mulf %s, %scale_t : tensor<128x128xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x128xf32>
    %p = math.exp2 %s_shift : tensor<128x128xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x96xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x96xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x96xbf16> -> tensor<128x96xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>
  }
  // the diagonal blocks: causal and sequence-length masks
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %kv_end step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x96xbf16, box = [1, 128, 96]> -> tensor<128x96xbf16>
    %k_tt = tile.trans %k_t : tensor<128x96xbf16> -> tensor<96x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x96xbf16>, tensor<96x128xbf16> -> tensor<128x128xf32>
    // keys past the sequence end and keys after the query score -inf
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x128xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x128xi32>
    %cols_b = tile.broadcast %col_ids : tensor<1x128xi32> -> tensor<128x128xi32>
    %in_seq = tile.cmpi slt, %cols_b, %seq_len_t : tensor<128x128xi32> -> tensor<128x128xi1>
    %s_len = tile.select %in_seq, %s, %neg_inf : tensor<128x128xi1>, tensor<128x128xf32>
    %causal = tile.cmpi sle, %cols_b, %rows_b : tensor<128x128xi32> -> tensor<128x128xi1>
    %s_causal = tile.select %causal, %s_len, %neg_inf : tensor<128x128xi1>, tensor<128x128xf32>
    %m_blk = tile.reduce max %s_causal, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %m_b = tile.broadcast %m_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %s_scaled = arith.mulf %s_causal, %scale_t : tensor<128x128xf32>
    %s_shift = arith.subf %s_scaled, %m_b : tensor<128x128xf32>
    %p = math.exp2 %s_shift : tensor<128x128xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<128xf32>
    %alpha = math.exp2 %m_diff : tensor<128xf32>
    %l_blk = tile.reduce sum %p, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %l_scaled = arith.mulf %l_i, %alpha : tensor<128xf32>
    %l_new = arith.addf %l_scaled, %l_blk : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x96xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x96xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x96xbf16> -> tensor<128x96xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x96xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x96xf32>
  %o_t = arith.truncf %o_f : tensor<128x96xf32> to tensor<128x96xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x96xbf16> -> !tile.desc<?x?x96xbf16, box = [1, 128, 96]>
  func.return
}
