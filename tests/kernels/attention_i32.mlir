// Attention over 64-row query blocks whose key loop counts key blocks with an i32
// counter (`%blocks` of 64 keys each): the passes must keep the counter's type
// (aref-partition rebuilds the loop, two-stage rotates it, the lowering and the
// PTX printer run it). One consumer warpgroup holds the 64-row tile.
// q, k, v, o: (batch*heads) x seq x 64, bf16. Grid: (ceil(seq / 64), batch*heads).
func.func @attention_i32(%q: !tile.desc<?x?x64xbf16, box = [1, 64, 64]>,
    %k: !tile.desc<?x?x64xbf16, box = [1, 64, 64]>,
    %v: !tile.desc<?x?x64xbf16, box = [1, 64, 64]>,
    %o: !tile.desc<?x?x64xbf16, box = [1, 64, 64]>,
    %blocks: i32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bh = tile.program_id y
  %c0 = arith.constant 0 : index
  %b64 = arith.constant 64 : index
  %zero_i = arith.constant 0 : i32
  %one_i = arith.constant 1 : i32
  %m0 = arith.muli %pid_m, %b64 : index
  %q_t = tile.load %q[%bh, %m0, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
  %ninf = arith.constant 0xFF800000 : f32
  %zero_s = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %m_init = tile.splat %ninf : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %m_f, %l_f, %acc_f = scf.for %j = %zero_i to %blocks step %one_i iter_args(%m_i = %m_init, %l_i = %l_init, %acc = %zero_s) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>) : i32 {
    %ji = arith.index_cast %j : i32 to index
    %n = arith.muli %ji, %b64 : index
    %k_t = tile.load %k[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %v_t = tile.load %v[%bh, %n, %c0] : !tile.desc<?x?x64xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %k_tt = tile.trans %k_t : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %s = tile.dot %q_t, %k_tt, %zero_s : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %m_blk = tile.reduce max %s, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %m_blk : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %s_shift = arith.subf %s, %m_b : tensor<64x64xf32>
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
