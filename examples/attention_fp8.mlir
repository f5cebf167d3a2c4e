// FP8 FlashAttention forward: O = softmax(Q K^T * sm_scale) V with Q, K, V in e4m3
// and per-tensor descales (the real Q is q_descale * Q, likewise K and V), O in
// bf16; one program per (BM-query block, batch * head). Q and O are [BH, SQ, D],
// K is [BH, SK, D], and V comes transposed, v_t = [BH, D, SK] (tile.dims: BH =
// batch * heads, SQ / SK = query / key length, D = head dim). Both products read
// their shared-memory operands K-major, the only way wgmma reads 8-bit inputs:
// K's rows of D are the K dimension of Q K^T, and for P V the K dimension is the
// keys, which only a transposed V stores contiguously (attention_fp8_v.mlir takes
// V as stored and has the producer transpose each tile).
// The online softmax is that of attention.mlir with the descales folded into
// the score scale (sm_scale * log2(e) * q_descale * k_descale), but m moves in
// steps of 1 (log2 units) and the probabilities are exp2(s * scale - m + 7): the largest of a row
// lies in [128, 256), high in e4m3's range (largest 448), so that P, cast to e4m3
// (round to nearest even, saturating) for the second product, keeps 3 mantissa
// bits on its large values and flushes to zero only what lies 2^17 below the
// row's largest (FlashAttention-3 puts the largest at 256 with a fixed offset of 8
// on the exact max). A row's common factor cancels in O = acc / l, since l sums
// the same f32 probabilities; v_descale is applied there, once per row. alpha
// stays exactly 1 while a row's max stays within its power of two. SQ may differ from
// SK: the causal kernels let query i see keys 0..i. BM = 128, BN = 128 are named
// (tile.box, tile.size), so `tile-shape{block-m=.. block-n=..}` can resize them;
// BN stays a multiple of 128 (a V^T row of BN bytes is a 128-byte swizzle chunk).
// Launch grid: (ceil(SQ / BM), BH). Head dim 64 has 64-byte rows of Q and K, moved
// and read 64-byte swizzled; head dim 96 has 96-byte rows, three 32-byte swizzled
// chunks (head dims that are not multiples of 32 are refused: wgmma's e4m3 K step
// is 32).
//
//   @attention_d64_fp8, @attention_d96_fp8, @attention_d128_fp8, @attention_d256_fp8:
//     every key; the blocks wholly inside the sequence run unmasked, the last
//     partial block masks keys past seq_len.
//   @attention_causal_d64_fp8, @attention_causal_d96_fp8, @attention_causal_d128_fp8, @attention_causal_d256_fp8:
//     keys up to the query position; the blocks left of the query block run
//     unmasked, the rest with the causal and sequence-length masks.

func.func @attention_d64_fp8(%q: !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v_t: !tile.desc<?x64x?xf8E4M3FN, box = [1, 64, 128]> {tile.box = ["", "", "BN"], tile.dims = ["BH", "D", "SK"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %q_descale: f32, %k_descale: f32, %v_descale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> -> tensor<128x64xf8E4M3FN>
  %log2e = arith.constant 1.44269502 : f32
  %sm_log2 = arith.mulf %sm_scale, %log2e : f32
  %qk_descale = arith.mulf %q_descale, %k_descale : f32
  %qk_scale = arith.mulf %sm_log2, %qk_descale : f32
  // the running max moves in steps of 1 (log2 units)
  %max_step = arith.constant 1.0 : f32
  %per_max_step = arith.constant 1.0 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // the largest probability of a row in [2^7, 2^8): e4m3's range
  %p_offset = arith.constant 7.0 : f32
  %p_offset_r = tile.splat %p_offset : f32 -> tensor<128xf32>
  // key blocks wholly inside the sequence need no mask
  %seq_blocks = arith.divui %seq_len, %bn : index
  %full_end = arith.muli %seq_blocks, %bn : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> -> tensor<128x64xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x64x?xf8E4M3FN, box = [1, 64, 128]> -> tensor<64x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<64x128xf8E4M3FN> -> tensor<128x64xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x64xf8E4M3FN> -> tensor<64x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x64xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<128x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  }
  // the last, partial block (if any): sequence-length mask
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %seq_len step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> -> tensor<128x64xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x64x?xf8E4M3FN, box = [1, 64, 128]> -> tensor<64x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<64x128xf8E4M3FN> -> tensor<128x64xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x64xf8E4M3FN> -> tensor<64x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN> -> tensor<128x128xf32>
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
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x64xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<128x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = tile.splat %v_descale : f32 -> tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x64xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x64xf32>
  %o_t = arith.truncf %o_f : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x64xbf16> -> !tile.desc<?x?x64xbf16, box = [1, 128, 64]>
  func.return
}

func.func @attention_causal_d64_fp8(%q: !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v_t: !tile.desc<?x64x?xf8E4M3FN, box = [1, 64, 128]> {tile.box = ["", "", "BN"], tile.dims = ["BH", "D", "SK"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %q_descale: f32, %k_descale: f32, %v_descale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> -> tensor<128x64xf8E4M3FN>
  %log2e = arith.constant 1.44269502 : f32
  %sm_log2 = arith.mulf %sm_scale, %log2e : f32
  %qk_descale = arith.mulf %q_descale, %k_descale : f32
  %qk_scale = arith.mulf %sm_log2, %qk_descale : f32
  // the running max moves in steps of 1 (log2 units)
  %max_step = arith.constant 1.0 : f32
  %per_max_step = arith.constant 1.0 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // the largest probability of a row in [2^7, 2^8): e4m3's range
  %p_offset = arith.constant 7.0 : f32
  %p_offset_r = tile.splat %p_offset : f32 -> tensor<128xf32>
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
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> -> tensor<128x64xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x64x?xf8E4M3FN, box = [1, 64, 128]> -> tensor<64x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<64x128xf8E4M3FN> -> tensor<128x64xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x64xf8E4M3FN> -> tensor<64x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x64xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<128x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  }
  // the diagonal blocks: causal and sequence-length masks
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %kv_end step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xf8E4M3FN, box = [1, 128, 64]> -> tensor<128x64xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x64x?xf8E4M3FN, box = [1, 64, 128]> -> tensor<64x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<64x128xf8E4M3FN> -> tensor<128x64xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x64xf8E4M3FN> -> tensor<64x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN> -> tensor<128x128xf32>
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
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x64xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x64xf8E4M3FN> -> tensor<128x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = tile.splat %v_descale : f32 -> tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x64xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x64xf32>
  %o_t = arith.truncf %o_f : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x64xbf16> -> !tile.desc<?x?x64xbf16, box = [1, 128, 64]>
  func.return
}

func.func @attention_d96_fp8(%q: !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v_t: !tile.desc<?x96x?xf8E4M3FN, box = [1, 96, 128]> {tile.box = ["", "", "BN"], tile.dims = ["BH", "D", "SK"]},
    %o: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %q_descale: f32, %k_descale: f32, %v_descale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> -> tensor<128x96xf8E4M3FN>
  %log2e = arith.constant 1.44269502 : f32
  %sm_log2 = arith.mulf %sm_scale, %log2e : f32
  %qk_descale = arith.mulf %q_descale, %k_descale : f32
  %qk_scale = arith.mulf %sm_log2, %qk_descale : f32
  // the running max moves in steps of 1 (log2 units)
  %max_step = arith.constant 1.0 : f32
  %per_max_step = arith.constant 1.0 : f32
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
  // the largest probability of a row in [2^7, 2^8): e4m3's range
  %p_offset = arith.constant 7.0 : f32
  %p_offset_r = tile.splat %p_offset : f32 -> tensor<128xf32>
  // key blocks wholly inside the sequence need no mask
  %seq_blocks = arith.divui %seq_len, %bn : index
  %full_end = arith.muli %seq_blocks, %bn : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> -> tensor<128x96xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x96x?xf8E4M3FN, box = [1, 96, 128]> -> tensor<96x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<96x128xf8E4M3FN> -> tensor<128x96xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x96xf8E4M3FN> -> tensor<96x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x96xf8E4M3FN>, tensor<96x128xf8E4M3FN> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x96xf8E4M3FN> -> tensor<128x96xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>
  }
  // the last, partial block (if any): sequence-length mask
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %seq_len step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> -> tensor<128x96xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x96x?xf8E4M3FN, box = [1, 96, 128]> -> tensor<96x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<96x128xf8E4M3FN> -> tensor<128x96xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x96xf8E4M3FN> -> tensor<96x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x96xf8E4M3FN>, tensor<96x128xf8E4M3FN> -> tensor<128x128xf32>
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
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x96xf8E4M3FN> -> tensor<128x96xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = tile.splat %v_descale : f32 -> tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x96xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x96xf32>
  %o_t = arith.truncf %o_f : tensor<128x96xf32> to tensor<128x96xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x96xbf16> -> !tile.desc<?x?x96xbf16, box = [1, 128, 96]>
  func.return
}

func.func @attention_causal_d96_fp8(%q: !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v_t: !tile.desc<?x96x?xf8E4M3FN, box = [1, 96, 128]> {tile.box = ["", "", "BN"], tile.dims = ["BH", "D", "SK"]},
    %o: !tile.desc<?x?x96xbf16, box = [1, 128, 96]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %q_descale: f32, %k_descale: f32, %v_descale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> -> tensor<128x96xf8E4M3FN>
  %log2e = arith.constant 1.44269502 : f32
  %sm_log2 = arith.mulf %sm_scale, %log2e : f32
  %qk_descale = arith.mulf %q_descale, %k_descale : f32
  %qk_scale = arith.mulf %sm_log2, %qk_descale : f32
  // the running max moves in steps of 1 (log2 units)
  %max_step = arith.constant 1.0 : f32
  %per_max_step = arith.constant 1.0 : f32
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
  // the largest probability of a row in [2^7, 2^8): e4m3's range
  %p_offset = arith.constant 7.0 : f32
  %p_offset_r = tile.splat %p_offset : f32 -> tensor<128xf32>
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
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> -> tensor<128x96xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x96x?xf8E4M3FN, box = [1, 96, 128]> -> tensor<96x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<96x128xf8E4M3FN> -> tensor<128x96xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x96xf8E4M3FN> -> tensor<96x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x96xf8E4M3FN>, tensor<96x128xf8E4M3FN> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x96xf8E4M3FN> -> tensor<128x96xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>
  }
  // the diagonal blocks: causal and sequence-length masks
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %kv_end step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x96xf8E4M3FN, box = [1, 128, 96]> -> tensor<128x96xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x96x?xf8E4M3FN, box = [1, 96, 128]> -> tensor<96x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<96x128xf8E4M3FN> -> tensor<128x96xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x96xf8E4M3FN> -> tensor<96x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x96xf8E4M3FN>, tensor<96x128xf8E4M3FN> -> tensor<128x128xf32>
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
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x96xf8E4M3FN> -> tensor<128x96xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x96xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = tile.splat %v_descale : f32 -> tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x96xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x96xf32>
  %o_t = arith.truncf %o_f : tensor<128x96xf32> to tensor<128x96xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x96xbf16> -> !tile.desc<?x?x96xbf16, box = [1, 128, 96]>
  func.return
}

func.func @attention_d128_fp8(%q: !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v_t: !tile.desc<?x128x?xf8E4M3FN, box = [1, 128, 128]> {tile.box = ["", "", "BN"], tile.dims = ["BH", "D", "SK"]},
    %o: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %q_descale: f32, %k_descale: f32, %v_descale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
  %log2e = arith.constant 1.44269502 : f32
  %sm_log2 = arith.mulf %sm_scale, %log2e : f32
  %qk_descale = arith.mulf %q_descale, %k_descale : f32
  %qk_scale = arith.mulf %sm_log2, %qk_descale : f32
  // the running max moves in steps of 1 (log2 units)
  %max_step = arith.constant 1.0 : f32
  %per_max_step = arith.constant 1.0 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // the largest probability of a row in [2^7, 2^8): e4m3's range
  %p_offset = arith.constant 7.0 : f32
  %p_offset_r = tile.splat %p_offset : f32 -> tensor<128xf32>
  // key blocks wholly inside the sequence need no mask
  %seq_blocks = arith.divui %seq_len, %bn : index
  %full_end = arith.muli %seq_blocks, %bn : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x128x?xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x128xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
  }
  // the last, partial block (if any): sequence-length mask
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %seq_len step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x128x?xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
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
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x128xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = tile.splat %v_descale : f32 -> tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x128xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x128xf32>
  %o_t = arith.truncf %o_f : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?x128xbf16, box = [1, 128, 128]>
  func.return
}

func.func @attention_causal_d128_fp8(%q: !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v_t: !tile.desc<?x128x?xf8E4M3FN, box = [1, 128, 128]> {tile.box = ["", "", "BN"], tile.dims = ["BH", "D", "SK"]},
    %o: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %q_descale: f32, %k_descale: f32, %v_descale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
  %log2e = arith.constant 1.44269502 : f32
  %sm_log2 = arith.mulf %sm_scale, %log2e : f32
  %qk_descale = arith.mulf %q_descale, %k_descale : f32
  %qk_scale = arith.mulf %sm_log2, %qk_descale : f32
  // the running max moves in steps of 1 (log2 units)
  %max_step = arith.constant 1.0 : f32
  %per_max_step = arith.constant 1.0 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // the largest probability of a row in [2^7, 2^8): e4m3's range
  %p_offset = arith.constant 7.0 : f32
  %p_offset_r = tile.splat %p_offset : f32 -> tensor<128xf32>
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
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x128x?xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x128xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
  }
  // the diagonal blocks: causal and sequence-length masks
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %kv_end step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x128xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x128x?xf8E4M3FN, box = [1, 128, 128]> -> tensor<128x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
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
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x128xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = tile.splat %v_descale : f32 -> tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x128xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x128xf32>
  %o_t = arith.truncf %o_f : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?x128xbf16, box = [1, 128, 128]>
  func.return
}

func.func @attention_d256_fp8(%q: !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v_t: !tile.desc<?x256x?xf8E4M3FN, box = [1, 256, 128]> {tile.box = ["", "", "BN"], tile.dims = ["BH", "D", "SK"]},
    %o: !tile.desc<?x?x256xbf16, box = [1, 128, 256]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %q_descale: f32, %k_descale: f32, %v_descale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> -> tensor<128x256xf8E4M3FN>
  %log2e = arith.constant 1.44269502 : f32
  %sm_log2 = arith.mulf %sm_scale, %log2e : f32
  %qk_descale = arith.mulf %q_descale, %k_descale : f32
  %qk_scale = arith.mulf %sm_log2, %qk_descale : f32
  // the running max moves in steps of 1 (log2 units)
  %max_step = arith.constant 1.0 : f32
  %per_max_step = arith.constant 1.0 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // the largest probability of a row in [2^7, 2^8): e4m3's range
  %p_offset = arith.constant 7.0 : f32
  %p_offset_r = tile.splat %p_offset : f32 -> tensor<128xf32>
  // key blocks wholly inside the sequence need no mask
  %seq_blocks = arith.divui %seq_len, %bn : index
  %full_end = arith.muli %seq_blocks, %bn : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x256xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> -> tensor<128x256xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x256x?xf8E4M3FN, box = [1, 256, 128]> -> tensor<256x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<256x128xf8E4M3FN> -> tensor<128x256xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x256xf8E4M3FN> -> tensor<256x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x256xf8E4M3FN>, tensor<256x128xf8E4M3FN> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x256xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x256xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x256xf8E4M3FN> -> tensor<128x256xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x256xf32>
  }
  // the last, partial block (if any): sequence-length mask
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %seq_len step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x256xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> -> tensor<128x256xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x256x?xf8E4M3FN, box = [1, 256, 128]> -> tensor<256x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<256x128xf8E4M3FN> -> tensor<128x256xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x256xf8E4M3FN> -> tensor<256x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x256xf8E4M3FN>, tensor<256x128xf8E4M3FN> -> tensor<128x128xf32>
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
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x256xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x256xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x256xf8E4M3FN> -> tensor<128x256xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x256xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = tile.splat %v_descale : f32 -> tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x256xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x256xf32>
  %o_t = arith.truncf %o_f : tensor<128x256xf32> to tensor<128x256xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x256xbf16> -> !tile.desc<?x?x256xbf16, box = [1, 128, 256]>
  func.return
}

func.func @attention_causal_d256_fp8(%q: !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> {tile.box = ["", "BN", ""], tile.dims = ["BH", "SK", "D"]},
    %v_t: !tile.desc<?x256x?xf8E4M3FN, box = [1, 256, 128]> {tile.box = ["", "", "BN"], tile.dims = ["BH", "D", "SK"]},
    %o: !tile.desc<?x?x256xbf16, box = [1, 128, 256]> {tile.box = ["", "BM", ""], tile.dims = ["BH", "SQ", "D"]},
    %sm_scale: f32, %q_descale: f32, %k_descale: f32, %v_descale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> -> tensor<128x256xf8E4M3FN>
  %log2e = arith.constant 1.44269502 : f32
  %sm_log2 = arith.mulf %sm_scale, %log2e : f32
  %qk_descale = arith.mulf %q_descale, %k_descale : f32
  %qk_scale = arith.mulf %sm_log2, %qk_descale : f32
  // the running max moves in steps of 1 (log2 units)
  %max_step = arith.constant 1.0 : f32
  %per_max_step = arith.constant 1.0 : f32
  %max_steps_per_score = arith.mulf %qk_scale, %per_max_step : f32
  %max_step_r = tile.splat %max_step : f32 -> tensor<128xf32>
  %steps_r = tile.splat %max_steps_per_score : f32 -> tensor<128xf32>
  %scale_t = tile.splat %qk_scale : f32 -> tensor<128x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<128xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // the largest probability of a row in [2^7, 2^8): e4m3's range
  %p_offset = arith.constant 7.0 : f32
  %p_offset_r = tile.splat %p_offset : f32 -> tensor<128xf32>
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
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x256xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> -> tensor<128x256xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x256x?xf8E4M3FN, box = [1, 256, 128]> -> tensor<256x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<256x128xf8E4M3FN> -> tensor<128x256xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x256xf8E4M3FN> -> tensor<256x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x256xf8E4M3FN>, tensor<256x128xf8E4M3FN> -> tensor<128x128xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %blk_steps = arith.mulf %m_blk, %steps_r : tensor<128xf32>
    %blk_steps_down = math.floor %blk_steps : tensor<128xf32>
    %m_blk_down = arith.mulf %blk_steps_down, %max_step_r : tensor<128xf32>
    %m_new = arith.maximumf %m_i, %m_blk_down : tensor<128xf32>
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x256xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x256xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x256xf8E4M3FN> -> tensor<128x256xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x256xf32>
  }
  // the diagonal blocks: causal and sequence-length masks
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %kv_end step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x256xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x256xf8E4M3FN, box = [1, 128, 256]> -> tensor<128x256xf8E4M3FN>
    %vt_blk = tile.load %v_t[%bh, %c0, %n] : !tile.desc<?x256x?xf8E4M3FN, box = [1, 256, 128]> -> tensor<256x128xf8E4M3FN>
    %v_blk = tile.trans %vt_blk : tensor<256x128xf8E4M3FN> -> tensor<128x256xf8E4M3FN>
    %k_tt = tile.trans %k_t : tensor<128x256xf8E4M3FN> -> tensor<256x128xf8E4M3FN>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x256xf8E4M3FN>, tensor<256x128xf8E4M3FN> -> tensor<128x128xf32>
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
    %m_shift = arith.subf %m_new, %p_offset_r : tensor<128xf32>
    %m_e = tile.expand_dims %m_shift, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x256xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x256xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %acc_new = tile.dot %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN>, tensor<128x256xf8E4M3FN> -> tensor<128x256xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x256xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = tile.splat %v_descale : f32 -> tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x256xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x256xf32>
  %o_t = arith.truncf %o_f : tensor<128x256xf32> to tensor<128x256xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x256xbf16> -> !tile.desc<?x?x256xbf16, box = [1, 128, 256]>
  func.return
}
