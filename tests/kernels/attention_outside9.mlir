// Attention an outside user writes (the ninth sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py):
//   @attention_alibi_d32: O = bf16(softmax(scale Q K^T - slope[bh] |i - j|) V) at head
//                   dim 32, not causal: ALiBi with each head's slope loaded from a
//                   [BH, 4] f32 table (column 0; a row box of 4, its first element by
//                   tile.extract: TMA starts a box on a 16-byte boundary only),
//                   the distance |i - j| from tile.iota, arith.subi and arith.maxsi
//                   of both differences, converted by tile.sitofp; keys past SK masked
// Grid: (ceil(SQ / 64), BH).

// O = bf16(softmax(scale Q K^T - slope |i - j|) V), D = 32.
func.func @attention_alibi_d32(%q: !tile.desc<?x?x32xbf16, box = [1, 64, 32]> {tile.dims = ["BH", "SQ", "D"]},
    %k: !tile.desc<?x?x32xbf16, box = [1, 64, 32]> {tile.dims = ["BH", "SK", "D"]},
    %v: !tile.desc<?x?x32xbf16, box = [1, 64, 32]> {tile.dims = ["BH", "SK", "D"]},
    %o: !tile.desc<?x?x32xbf16, box = [1, 64, 32]> {tile.dims = ["BH", "SQ", "D"]},
    %slopes: !tile.desc<?x4xf32, box = [1, 4]> {tile.dims = ["BH", ""]},
    %sm_scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %seq_len = tile.dim %k, 1 : !tile.desc<?x?x32xbf16, box = [1, 64, 32]>
  %c0 = arith.constant 0 : index
  %bm = arith.constant 64 : index
  %bn = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %bm : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x32xbf16, box = [1, 64, 32]> -> tensor<64x32xbf16>
  %sl_t = tile.load %slopes[%bh, %c0] : !tile.desc<?x4xf32, box = [1, 4]> -> tensor<4xf32>
  %slope = tile.extract %sl_t[0] : tensor<4xf32>
  %slope_t = tile.splat %slope : f32 -> tensor<64x64xf32>
  %sc_t = tile.splat %sm_scale : f32 -> tensor<64x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %zero_o = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %seq_len_i32 = arith.index_cast %seq_len : index to i32
  %seq_len_t = tile.splat %seq_len_i32 : i32 -> tensor<64x64xi32>
  %iota = tile.iota : tensor<64xi32>
  %col_iota = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %row_iota = tile.expand_dims %iota, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %m0_c = tile.splat %m0_i32 : i32 -> tensor<64x1xi32>
  %rows_c = arith.addi %row_iota, %m0_c : tensor<64x1xi32>
  %rows = tile.broadcast %rows_c : tensor<64x1xi32> -> tensor<64x64xi32>
  %m_f, %l_f, %acc_f = scf.for %n = %c0 to %seq_len step %bn iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_o) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x32xf32>) {
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x32xbf16, box = [1, 64, 32]> -> tensor<64x32xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x32xbf16, box = [1, 64, 32]> -> tensor<64x32xbf16>
    %k_tt = tile.trans %k_t : tensor<64x32xbf16> -> tensor<32x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %col_ids = arith.addi %col_iota, %n_row : tensor<1x64xi32>
    %cols = tile.broadcast %col_ids : tensor<1x64xi32> -> tensor<64x64xi32>
    %d1 = arith.subi %rows, %cols : tensor<64x64xi32>
    %d2 = arith.subi %cols, %rows : tensor<64x64xi32>
    %dist = arith.maxsi %d1, %d2 : tensor<64x64xi32>
    %dist_f = tile.sitofp %dist : tensor<64x64xi32> -> tensor<64x64xf32>
    %bias = arith.mulf %dist_f, %slope_t : tensor<64x64xf32>
    %ss = arith.mulf %s, %sc_t : tensor<64x64xf32>
    %sb = arith.subf %ss, %bias : tensor<64x64xf32>
    %in_seq = tile.cmpi slt, %cols, %seq_len_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %s1 = tile.select %in_seq, %sb, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %m_blk = tile.reduce max %s1, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %m_blk : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %s_shift = arith.subf %s1, %m_b : tensor<64x64xf32>
    %p = math.exp %s_shift : tensor<64x64xf32>
    %m_diff = arith.subf %m_i, %m_new : tensor<64xf32>
    %alpha = math.exp %m_diff : tensor<64xf32>
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
