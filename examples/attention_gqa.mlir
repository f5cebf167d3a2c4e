// Grouped-query FlashAttention forward (GQA; MQA when all query heads of a batch
// share one kv head): q_heads = group * kv_heads, query head h reads kv head
// h / group. The caller passes Q and O, [B * HQ, SQ, D] bf16 tensors, folded (a
// free view of the contiguous tensor) to [BHKV, GSQ, D]: the group query heads of
// one kv head stacked along the rows, fold row r being position r % SQ of the
// group's query head r / SQ. K and V are [BHKV, SK, D] (tile.dims: BHKV = batch *
// kv heads, GSQ = group * SQ, SK, D). One program per (BM-row block of the fold,
// batch * kv head): each K/V tile it loads feeds BM query rows of the group, of
// several query heads wherever a block spans a head boundary, so K and V are
// read ceil(group * SQ / BM) times per kv head against group * ceil(SQ / BM)
// for one program per (query block, query head): the same when BM divides SQ,
// group times fewer when SQ <= BM / group (decoding, short prompts).
// group is not passed: it is the fold (BHQ / BHKV). A query that was not folded
// is refused by the contract (its BHKV differs from K's unless group = 1).
// The online softmax is attention.mlir's (running max in steps of 8, log2
// units); BM = 128, BN = 128 are named (tile.box, tile.size), so
// `tile-shape{block-m=.. block-n=..}` can resize them. Launch grid:
// (ceil(GSQ / BM), BHKV).
//
//   @attention_gqa_d64, @attention_gqa_d128:
//     attention.mlir's kernels applied to the fold (a query row's result does
//     not depend on its position), under the GQA contract.
//   @attention_gqa_causal_d64, @attention_gqa_causal_d128:
//     take SQ (%seq_q; the caller checks that it divides GSQ, i.e. that the
//     fold is [BHKV, group * SQ, D]) and let fold row r see keys 0 .. r % SQ.
//     A block within one head runs the key blocks left of its first position
//     unmasked and the rest masked; a block that spans heads runs every key
//     block up to min(SQ, SK) masked.

func.func @attention_gqa_d64(%q: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BM", ""], tile.dims = ["BHKV", "GSQ", "D"]},
    %k: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BN", ""], tile.dims = ["BHKV", "SK", "D"]},
    %v: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BN", ""], tile.dims = ["BHKV", "SK", "D"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BM", ""], tile.dims = ["BHKV", "GSQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xbf16, box = [1, 128, 64]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
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
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // key blocks wholly inside the sequence need no mask
  %seq_blocks = arith.divui %seq_len, %bn : index
  %full_end = arith.muli %seq_blocks, %bn : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %k_tt = tile.trans %k_t : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x64xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  }
  // the last, partial block (if any): sequence-length mask
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %seq_len step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %k_tt = tile.trans %k_t : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x64xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x64xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x64xf32>
  %o_t = arith.truncf %o_f : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x64xbf16> -> !tile.desc<?x?x64xbf16, box = [1, 128, 64]>
  func.return
}

func.func @attention_gqa_causal_d64(%q: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BM", ""], tile.dims = ["BHKV", "GSQ", "D"]},
    %k: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BN", ""], tile.dims = ["BHKV", "SK", "D"]},
    %v: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BN", ""], tile.dims = ["BHKV", "SK", "D"]},
    %o: !tile.desc<?x?x64xbf16, box = [1, 128, 64]> {tile.box = ["", "BM", ""], tile.dims = ["BHKV", "GSQ", "D"]},
    %sm_scale: f32, %seq_q: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x64xbf16, box = [1, 128, 64]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
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
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_col = tile.splat %m0_i32 : i32 -> tensor<128x1xi32>
  %row_iota_1d = tile.iota : tensor<128xi32>
  %row_iota = tile.expand_dims %row_iota_1d, axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %row_ids = arith.addi %row_iota, %m0_col : tensor<128x1xi32>
  // row r of the fold is position r % SQ of query head r / SQ
  %seq_q_i32 = arith.index_cast %seq_q : index to i32
  %seq_q_col = tile.splat %seq_q_i32 : i32 -> tensor<128x1xi32>
  %row_pos = arith.remui %row_ids, %seq_q_col : tensor<128x1xi32>
  %p0 = arith.remui %m0, %seq_q : index
  %p_end = arith.addi %p0, %bm : index
  %one_head = arith.cmpi ule, %p_end, %seq_q : index
  %lo_any = arith.select %one_head, %p0, %c0 : index
  // no unmasked key block past the keys (SQ > SK)
  %lo = arith.minui %lo_any, %seq_len : index
  %hi = arith.minui %p_end, %seq_q : index
  %rows_b = tile.broadcast %row_pos : tensor<128x1xi32> -> tensor<128x128xi32>
  // key blocks wholly left of the query block need no mask
  %m0_blocks = arith.divui %lo, %bn : index
  %full_end = arith.muli %m0_blocks, %bn : index
  %kv_end = arith.minui %hi, %seq_len : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %k_tt = tile.trans %k_t : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x64xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  }
  // the diagonal blocks: causal and sequence-length masks
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %kv_end step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %k_tt = tile.trans %k_t : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x64xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x64xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x64xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x64xf32>
  %o_t = arith.truncf %o_f : tensor<128x64xf32> to tensor<128x64xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x64xbf16> -> !tile.desc<?x?x64xbf16, box = [1, 128, 64]>
  func.return
}

func.func @attention_gqa_d128(%q: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BM", ""], tile.dims = ["BHKV", "GSQ", "D"]},
    %k: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BN", ""], tile.dims = ["BHKV", "SK", "D"]},
    %v: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BN", ""], tile.dims = ["BHKV", "SK", "D"]},
    %o: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BM", ""], tile.dims = ["BHKV", "GSQ", "D"]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x128xbf16, box = [1, 128, 128]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
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
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  // key blocks wholly inside the sequence need no mask
  %seq_blocks = arith.divui %seq_len, %bn : index
  %full_end = arith.muli %seq_blocks, %bn : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
    %k_tt = tile.trans %k_t : tensor<128x128xbf16> -> tensor<128x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x128xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
  }
  // the last, partial block (if any): sequence-length mask
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %seq_len step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
    %k_tt = tile.trans %k_t : tensor<128x128xbf16> -> tensor<128x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x128xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x128xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x128xf32>
  %o_t = arith.truncf %o_f : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?x128xbf16, box = [1, 128, 128]>
  func.return
}

func.func @attention_gqa_causal_d128(%q: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BM", ""], tile.dims = ["BHKV", "GSQ", "D"]},
    %k: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BN", ""], tile.dims = ["BHKV", "SK", "D"]},
    %v: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BN", ""], tile.dims = ["BHKV", "SK", "D"]},
    %o: !tile.desc<?x?x128xbf16, box = [1, 128, 128]> {tile.box = ["", "BM", ""], tile.dims = ["BHKV", "GSQ", "D"]},
    %sm_scale: f32, %seq_q: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x128xbf16, box = [1, 128, 128]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
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
  %acc_init = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<128x128xi32>
  %col_iota_1d = tile.iota : tensor<128xi32>
  %col_iota = tile.expand_dims %col_iota_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_col = tile.splat %m0_i32 : i32 -> tensor<128x1xi32>
  %row_iota_1d = tile.iota : tensor<128xi32>
  %row_iota = tile.expand_dims %row_iota_1d, axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %row_ids = arith.addi %row_iota, %m0_col : tensor<128x1xi32>
  // row r of the fold is position r % SQ of query head r / SQ
  %seq_q_i32 = arith.index_cast %seq_q : index to i32
  %seq_q_col = tile.splat %seq_q_i32 : i32 -> tensor<128x1xi32>
  %row_pos = arith.remui %row_ids, %seq_q_col : tensor<128x1xi32>
  %p0 = arith.remui %m0, %seq_q : index
  %p_end = arith.addi %p0, %bm : index
  %one_head = arith.cmpi ule, %p_end, %seq_q : index
  %lo_any = arith.select %one_head, %p0, %c0 : index
  // no unmasked key block past the keys (SQ > SK)
  %lo = arith.minui %lo_any, %seq_len : index
  %hi = arith.minui %p_end, %seq_q : index
  %rows_b = tile.broadcast %row_pos : tensor<128x1xi32> -> tensor<128x128xi32>
  // key blocks wholly left of the query block need no mask
  %m0_blocks = arith.divui %lo, %bn : index
  %full_end = arith.muli %m0_blocks, %bn : index
  %kv_end = arith.minui %hi, %seq_len : index
  %m_1, %l_1, %acc_1 = scf.for %n = %c0 to %full_end step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %acc_init) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
    %k_tt = tile.trans %k_t : tensor<128x128xbf16> -> tensor<128x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x128xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
  }
  // the diagonal blocks: causal and sequence-length masks
  %m_f, %l_f, %acc_f = scf.for %n = %full_end to %kv_end step %bn iter_args(%m_i = %m_1, %l_i = %l_1, %acc = %acc_1) -> (tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x128xbf16, box = [1, 128, 128]> -> tensor<128x128xbf16>
    %k_tt = tile.trans %k_t : tensor<128x128xbf16> -> tensor<128x128xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
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
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %acc_scaled = arith.mulf %acc, %alpha_b : tensor<128x128xf32>
    %p_lo = arith.truncf %p : tensor<128x128xf32> to tensor<128x128xbf16>
    %acc_new = tile.dot %p_lo, %v_t, %acc_scaled : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
    scf.yield %m_new, %l_new, %acc_new : tensor<128xf32>, tensor<128xf32>, tensor<128x128xf32>
  } {tile.overlap = false}
  // one division per row, then a multiply per element
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %l_inv = arith.divf %ones, %l_f : tensor<128xf32>
  %l_e = tile.expand_dims %l_inv, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %l_b = tile.broadcast %l_e : tensor<128x1xf32> -> tensor<128x128xf32>
  %o_f = arith.mulf %acc_f, %l_b : tensor<128x128xf32>
  %o_t = arith.truncf %o_f : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %o_t, %o[%bh, %m0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?x128xbf16, box = [1, 128, 128]>
  func.return
}
