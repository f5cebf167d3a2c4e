// Kernels reading and writing i32 tensors (`!tile.desc<...xi32, ...>`), checked by
// tests/test_int_tensors.py and tests/gpu/test_int_tensors_gpu.py:
//   @xent_i32:          cross-entropy loss[m] = lse_n(x[m, n]) - x[m, t[m]], the targets
//                       t an i32 vector: the target's logit picked by tile.cmpi of the
//                       columns against the broadcast target and tile.select; a negative
//                       target (an ignored row) gives a loss of 0
//   @argmax_count_i32:  per row of an i32 matrix: the first column of its largest value,
//                       that value, and the count of values above a scalar threshold
//                       (i32 reductions max / min / sum, i32 stores of row vectors)
//   @affine_i32:        y = x * k + (row - col) on 64 x 32 i32 tiles (a 2-D i32 load
//                       and store)
//   @masked_fill:       y = x where mask != 0, else fill: an i32 mask beside f32 data
//   @row_sum_i32:       s[m] = sum_n x[m, n] in i32, wrapping as add.s32 does
//   @argmax_f32:        idx[m] = the first column of the largest of f32 logits (finite):
//                       tile.cmpf against the row maximum, an i32 min-reduction, an i32
//                       store
//   @accuracy_i8:       per row of f32 logits: the first column of the largest as an i64
//                       index (tile.extsi of the i32 argmax) and whether it is the row's
//                       i8 label (tile.extsi of the labels, tile.cmpi), as an i32
//   @mix_i8_i64:        y8 = trunci(extsi(x8) * k + trunci(x64)) in i8 (wrapping), and
//                       y64 = extsi(extsi(x8) - trunci(x64)) in i64, on 64 x 32 tiles (2-D
//                       i8 and i64 loads and stores)
//   @affine_i8:         y = trunci(extsi(x) * k + (row - col)) on 64 x 128 tiles of i8
//                       (whole 128-byte rows: stored through TMA)
// Grids: (ceil(M / 64),) (@affine_i32, @masked_fill, @mix_i8_i64: (ceil(M / 64),
// ceil(N / 32)); @affine_i8: (ceil(M / 64), ceil(N / 128))).

// Cross-entropy over rows of any width V with i32 targets; a row whose target is
// negative (ignored, as PyTorch's ignore_index) has loss 0.
func.func @xent_i32(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "V"]},
    %t: !tile.desc<?xi32, box = [64]> {tile.dims = ["M"]},
    %loss: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %V = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %tt = tile.load %t[%m0] : !tile.desc<?xi32, box = [64]> -> tensor<64xi32>
  %tt_col = tile.expand_dims %tt, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %tt_b = tile.broadcast %tt_col : tensor<64x1xi32> -> tensor<64x64xi32>
  %V_i32 = arith.index_cast %V : index to i32
  %V_t = tile.splat %V_i32 : i32 -> tensor<64x64xi32>
  %iota = tile.iota : tensor<64xi32>
  %iota_row = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %ninf = arith.constant 0xFF800000 : f32
  %ninf_t = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %big_neg = arith.constant -1.0e30 : f32
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %z64 = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %m_f, %l_f, %p_f = scf.for %n = %c0 to %V step %c64 iter_args(%m_i = %m_init, %l_i = %z64, %p_i = %z64) -> (tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) {
    %xt = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %cols_row = arith.addi %iota_row, %n_row : tensor<1x64xi32>
    %cols = tile.broadcast %cols_row : tensor<1x64xi32> -> tensor<64x64xi32>
    %inside = tile.cmpi slt, %cols, %V_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %xs = tile.select %inside, %xt, %ninf_t : tensor<64x64xi1>, tensor<64x64xf32>
    %bm = tile.reduce max %xs, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %bm : tensor<64xf32>
    %m_col = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_col : tensor<64x1xf32> -> tensor<64x64xf32>
    %sh = arith.subf %xs, %m_b : tensor<64x64xf32>
    %e = math.exp %sh : tensor<64x64xf32>
    %es = tile.reduce sum %e, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %dm = arith.subf %m_i, %m_new : tensor<64xf32>
    %alpha = math.exp %dm : tensor<64xf32>
    %l_a = arith.mulf %l_i, %alpha : tensor<64xf32>
    %l_new = arith.addf %l_a, %es : tensor<64xf32>
    %hit = tile.cmpi eq, %cols, %tt_b : tensor<64x64xi32> -> tensor<64x64xi1>
    %picked = tile.select %hit, %xt, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
    %ps = tile.reduce sum %picked, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %p_new = arith.addf %p_i, %ps : tensor<64xf32>
    scf.yield %m_new, %l_new, %p_new : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  }
  %log_l = math.log %l_f : tensor<64xf32>
  %lse = arith.addf %m_f, %log_l : tensor<64xf32>
  %raw = arith.subf %lse, %p_f : tensor<64xf32>
  %zero_v = arith.constant dense<0> : tensor<64xi32>
  %ignored = tile.cmpi slt, %tt, %zero_v : tensor<64xi32> -> tensor<64xi1>
  %out = tile.select %ignored, %z64, %raw : tensor<64xi1>, tensor<64xf32>
  tile.store %out, %loss[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}

// Per row m of x (M x N, i32): idx[m] = the first n with x[m, n] = max_n x[m, n],
// top[m] = that maximum, cnt[m] = #{n : x[m, n] > thr}. Columns past N (read as 0)
// are masked to i32's minimum, which is never above any threshold.
func.func @argmax_count_i32(%x: !tile.desc<?x?xi32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %thr: i32,
    %idx: !tile.desc<?xi32, box = [64]> {tile.dims = ["M"]},
    %top: !tile.desc<?xi32, box = [64]> {tile.dims = ["M"]},
    %cnt: !tile.desc<?xi32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xi32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %N_i32 = arith.index_cast %N : index to i32
  %N_t = tile.splat %N_i32 : i32 -> tensor<64x64xi32>
  %thr_t = tile.splat %thr : i32 -> tensor<64x64xi32>
  %iota = tile.iota : tensor<64xi32>
  %iota_row = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %lowest = arith.constant dense<-2147483648> : tensor<64x64xi32>
  %highest = arith.constant dense<2147483647> : tensor<64x64xi32>
  %ones = arith.constant dense<1> : tensor<64x64xi32>
  %zeros = arith.constant dense<0> : tensor<64x64xi32>
  %top_init = arith.constant dense<-2147483648> : tensor<64xi32>
  %z64 = arith.constant dense<0> : tensor<64xi32>
  %top_f, %idx_f, %cnt_f = scf.for %n = %c0 to %N step %c64 iter_args(%top_i = %top_init, %idx_i = %z64, %cnt_i = %z64) -> (tensor<64xi32>, tensor<64xi32>, tensor<64xi32>) {
    %xt = tile.load %x[%m0, %n] : !tile.desc<?x?xi32, box = [64, 64]> -> tensor<64x64xi32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %cols_row = arith.addi %iota_row, %n_row : tensor<1x64xi32>
    %cols = tile.broadcast %cols_row : tensor<1x64xi32> -> tensor<64x64xi32>
    %inside = tile.cmpi slt, %cols, %N_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %xs = tile.select %inside, %xt, %lowest : tensor<64x64xi1>, tensor<64x64xi32>
    %bm = tile.reduce max %xs, axis = 1 : tensor<64x64xi32> -> tensor<64xi32>
    %bm_col = tile.expand_dims %bm, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
    %bm_b = tile.broadcast %bm_col : tensor<64x1xi32> -> tensor<64x64xi32>
    %at_max = tile.cmpi eq, %xs, %bm_b : tensor<64x64xi32> -> tensor<64x64xi1>
    %cand = tile.select %at_max, %cols, %highest : tensor<64x64xi1>, tensor<64x64xi32>
    %bi = tile.reduce min %cand, axis = 1 : tensor<64x64xi32> -> tensor<64xi32>
    %better = tile.cmpi sgt, %bm, %top_i : tensor<64xi32> -> tensor<64xi1>
    %top_new = tile.select %better, %bm, %top_i : tensor<64xi1>, tensor<64xi32>
    %idx_new = tile.select %better, %bi, %idx_i : tensor<64xi1>, tensor<64xi32>
    %above = tile.cmpi sgt, %xs, %thr_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %hits = tile.select %above, %ones, %zeros : tensor<64x64xi1>, tensor<64x64xi32>
    %bc = tile.reduce sum %hits, axis = 1 : tensor<64x64xi32> -> tensor<64xi32>
    %cnt_new = arith.addi %cnt_i, %bc : tensor<64xi32>
    scf.yield %top_new, %idx_new, %cnt_new : tensor<64xi32>, tensor<64xi32>, tensor<64xi32>
  }
  tile.store %idx_f, %idx[%m0] : tensor<64xi32> -> !tile.desc<?xi32, box = [64]>
  tile.store %top_f, %top[%m0] : tensor<64xi32> -> !tile.desc<?xi32, box = [64]>
  tile.store %cnt_f, %cnt[%m0] : tensor<64xi32> -> !tile.desc<?xi32, box = [64]>
  func.return
}

// y[i, j] = x[i, j] * k + (i - j) on 64 x 32 tiles of i32 (products wrap, as i32 does).
func.func @affine_i32(%x: !tile.desc<?x?xi32, box = [64, 32]> {tile.dims = ["M", "N"]},
    %k: i32,
    %y: !tile.desc<?x?xi32, box = [64, 32]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %c32 = arith.constant 32 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c32 : index
  %xt = tile.load %x[%m0, %n0] : !tile.desc<?x?xi32, box = [64, 32]> -> tensor<64x32xi32>
  %iota = tile.iota : tensor<64xi32>
  %iota32 = tile.iota : tensor<32xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %n0_i32 = arith.index_cast %n0 : index to i32
  %m0_t = tile.splat %m0_i32 : i32 -> tensor<64x1xi32>
  %n0_t = tile.splat %n0_i32 : i32 -> tensor<1x32xi32>
  %r1 = tile.expand_dims %iota, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %c1 = tile.expand_dims %iota32, axis = 0 : tensor<32xi32> -> tensor<1x32xi32>
  %rows_c = arith.addi %r1, %m0_t : tensor<64x1xi32>
  %cols_r = arith.addi %c1, %n0_t : tensor<1x32xi32>
  %rows = tile.broadcast %rows_c : tensor<64x1xi32> -> tensor<64x32xi32>
  %cols = tile.broadcast %cols_r : tensor<1x32xi32> -> tensor<64x32xi32>
  %k_t = tile.splat %k : i32 -> tensor<64x32xi32>
  %scaled = arith.muli %xt, %k_t : tensor<64x32xi32>
  %diff = arith.subi %rows, %cols : tensor<64x32xi32>
  %yt = arith.addi %scaled, %diff : tensor<64x32xi32>
  tile.store %yt, %y[%m0, %n0] : tensor<64x32xi32> -> !tile.desc<?x?xi32, box = [64, 32]>
  func.return
}

// y = x where mask != 0, else fill (x, y f32; mask i32), on 64 x 32 tiles.
func.func @masked_fill(%x: !tile.desc<?x?xf32, box = [64, 32]> {tile.dims = ["M", "N"]},
    %mask: !tile.desc<?x?xi32, box = [64, 32]> {tile.dims = ["M", "N"]},
    %fill: f32,
    %y: !tile.desc<?x?xf32, box = [64, 32]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %c32 = arith.constant 32 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c32 : index
  %xt = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 32]> -> tensor<64x32xf32>
  %mt = tile.load %mask[%m0, %n0] : !tile.desc<?x?xi32, box = [64, 32]> -> tensor<64x32xi32>
  %zero = arith.constant dense<0> : tensor<64x32xi32>
  %keep = tile.cmpi ne, %mt, %zero : tensor<64x32xi32> -> tensor<64x32xi1>
  %fill_t = tile.splat %fill : f32 -> tensor<64x32xf32>
  %yt = tile.select %keep, %xt, %fill_t : tensor<64x32xi1>, tensor<64x32xf32>
  tile.store %yt, %y[%m0, %n0] : tensor<64x32xf32> -> !tile.desc<?x?xf32, box = [64, 32]>
  func.return
}

// s[m] = sum_n x[m, n] over rows of any width, in i32: sums past i32's range wrap
// (two's complement, as add.s32 does); columns past N read as 0.
func.func @row_sum_i32(%x: !tile.desc<?x?xi32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %s: !tile.desc<?xi32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xi32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %z64 = arith.constant dense<0> : tensor<64xi32>
  %sum = scf.for %n = %c0 to %N step %c64 iter_args(%acc = %z64) -> (tensor<64xi32>) {
    %xt = tile.load %x[%m0, %n] : !tile.desc<?x?xi32, box = [64, 64]> -> tensor<64x64xi32>
    %bs = tile.reduce sum %xt, axis = 1 : tensor<64x64xi32> -> tensor<64xi32>
    %next = arith.addi %acc, %bs : tensor<64xi32>
    scf.yield %next : tensor<64xi32>
  }
  tile.store %sum, %s[%m0] : tensor<64xi32> -> !tile.desc<?xi32, box = [64]>
  func.return
}

// idx[m] = the first n with x[m, n] = max_n x[m, n] over rows of any width of finite
// f32 logits (a greedy decoder's next token); columns past V are masked to -inf.
func.func @argmax_f32(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "V"]},
    %idx: !tile.desc<?xi32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %V = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %V_i32 = arith.index_cast %V : index to i32
  %V_t = tile.splat %V_i32 : i32 -> tensor<64x64xi32>
  %iota = tile.iota : tensor<64xi32>
  %iota_row = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %ninf = arith.constant 0xFF800000 : f32
  %ninf_t = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %top_init = tile.splat %ninf : f32 -> tensor<64xf32>
  %highest = arith.constant dense<2147483647> : tensor<64x64xi32>
  %z64 = arith.constant dense<0> : tensor<64xi32>
  %top_f, %idx_f = scf.for %n = %c0 to %V step %c64 iter_args(%top_i = %top_init, %idx_i = %z64) -> (tensor<64xf32>, tensor<64xi32>) {
    %xt = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %cols_row = arith.addi %iota_row, %n_row : tensor<1x64xi32>
    %cols = tile.broadcast %cols_row : tensor<1x64xi32> -> tensor<64x64xi32>
    %inside = tile.cmpi slt, %cols, %V_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %xs = tile.select %inside, %xt, %ninf_t : tensor<64x64xi1>, tensor<64x64xf32>
    %bm = tile.reduce max %xs, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %bm_col = tile.expand_dims %bm, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %bm_b = tile.broadcast %bm_col : tensor<64x1xf32> -> tensor<64x64xf32>
    %at_max = tile.cmpf oeq, %xs, %bm_b : tensor<64x64xf32> -> tensor<64x64xi1>
    %cand = tile.select %at_max, %cols, %highest : tensor<64x64xi1>, tensor<64x64xi32>
    %bi = tile.reduce min %cand, axis = 1 : tensor<64x64xi32> -> tensor<64xi32>
    %better = tile.cmpf ogt, %bm, %top_i : tensor<64xf32> -> tensor<64xi1>
    %top_new = tile.select %better, %bm, %top_i : tensor<64xi1>, tensor<64xf32>
    %idx_new = tile.select %better, %bi, %idx_i : tensor<64xi1>, tensor<64xi32>
    scf.yield %top_new, %idx_new : tensor<64xf32>, tensor<64xi32>
  }
  tile.store %idx_f, %idx[%m0] : tensor<64xi32> -> !tile.desc<?xi32, box = [64]>
  func.return
}

// idx[m] = the first n with x[m, n] = max_n x[m, n] (finite f32 logits) as an i64,
// hit[m] = 1 where it is label[m] (i8; a negative label is never hit), else 0.
func.func @accuracy_i8(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "V"]},
    %label: !tile.desc<?xi8, box = [64]> {tile.dims = ["M"]},
    %idx: !tile.desc<?xi64, box = [64]> {tile.dims = ["M"]},
    %hit: !tile.desc<?xi32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %V = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %V_i32 = arith.index_cast %V : index to i32
  %V_t = tile.splat %V_i32 : i32 -> tensor<64x64xi32>
  %iota = tile.iota : tensor<64xi32>
  %iota_row = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %ninf = arith.constant 0xFF800000 : f32
  %ninf_t = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %top_init = tile.splat %ninf : f32 -> tensor<64xf32>
  %highest = arith.constant dense<2147483647> : tensor<64x64xi32>
  %z64 = arith.constant dense<0> : tensor<64xi32>
  %ones = arith.constant dense<1> : tensor<64xi32>
  %top_f, %idx_f = scf.for %n = %c0 to %V step %c64 iter_args(%top_i = %top_init, %idx_i = %z64) -> (tensor<64xf32>, tensor<64xi32>) {
    %xt = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %n_i32 = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_i32 : i32 -> tensor<1x64xi32>
    %cols_row = arith.addi %iota_row, %n_row : tensor<1x64xi32>
    %cols = tile.broadcast %cols_row : tensor<1x64xi32> -> tensor<64x64xi32>
    %inside = tile.cmpi slt, %cols, %V_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %xs = tile.select %inside, %xt, %ninf_t : tensor<64x64xi1>, tensor<64x64xf32>
    %bm = tile.reduce max %xs, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %bm_col = tile.expand_dims %bm, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %bm_b = tile.broadcast %bm_col : tensor<64x1xf32> -> tensor<64x64xf32>
    %at_max = tile.cmpf oeq, %xs, %bm_b : tensor<64x64xf32> -> tensor<64x64xi1>
    %cand = tile.select %at_max, %cols, %highest : tensor<64x64xi1>, tensor<64x64xi32>
    %bi = tile.reduce min %cand, axis = 1 : tensor<64x64xi32> -> tensor<64xi32>
    %better = tile.cmpf ogt, %bm, %top_i : tensor<64xf32> -> tensor<64xi1>
    %top_new = tile.select %better, %bm, %top_i : tensor<64xi1>, tensor<64xf32>
    %idx_new = tile.select %better, %bi, %idx_i : tensor<64xi1>, tensor<64xi32>
    scf.yield %top_new, %idx_new : tensor<64xf32>, tensor<64xi32>
  }
  %lt = tile.load %label[%m0] : !tile.desc<?xi8, box = [64]> -> tensor<64xi8>
  %l32 = tile.extsi %lt : tensor<64xi8> -> tensor<64xi32>
  %same = tile.cmpi eq, %idx_f, %l32 : tensor<64xi32> -> tensor<64xi1>
  %hits = tile.select %same, %ones, %z64 : tensor<64xi1>, tensor<64xi32>
  %idx64 = tile.extsi %idx_f : tensor<64xi32> -> tensor<64xi64>
  tile.store %idx64, %idx[%m0] : tensor<64xi64> -> !tile.desc<?xi64, box = [64]>
  tile.store %hits, %hit[%m0] : tensor<64xi32> -> !tile.desc<?xi32, box = [64]>
  func.return
}

// y8 = trunci(extsi(x8) * k + trunci(x64)) (i8, wrapping), y64 = extsi(extsi(x8) -
// trunci(x64)) (i64), on 64 x 32 tiles.
func.func @mix_i8_i64(%x8: !tile.desc<?x?xi8, box = [64, 32]> {tile.dims = ["M", "N"]},
    %x64: !tile.desc<?x?xi64, box = [64, 32]> {tile.dims = ["M", "N"]},
    %k: i32,
    %y8: !tile.desc<?x?xi8, box = [64, 32]> {tile.dims = ["M", "N"]},
    %y64: !tile.desc<?x?xi64, box = [64, 32]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %c32 = arith.constant 32 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c32 : index
  %a8 = tile.load %x8[%m0, %n0] : !tile.desc<?x?xi8, box = [64, 32]> -> tensor<64x32xi8>
  %b64 = tile.load %x64[%m0, %n0] : !tile.desc<?x?xi64, box = [64, 32]> -> tensor<64x32xi64>
  %a = tile.extsi %a8 : tensor<64x32xi8> -> tensor<64x32xi32>
  %b = tile.trunci %b64 : tensor<64x32xi64> -> tensor<64x32xi32>
  %k_t = tile.splat %k : i32 -> tensor<64x32xi32>
  %ak = arith.muli %a, %k_t : tensor<64x32xi32>
  %sum = arith.addi %ak, %b : tensor<64x32xi32>
  %s8 = tile.trunci %sum : tensor<64x32xi32> -> tensor<64x32xi8>
  tile.store %s8, %y8[%m0, %n0] : tensor<64x32xi8> -> !tile.desc<?x?xi8, box = [64, 32]>
  %diff = arith.subi %a, %b : tensor<64x32xi32>
  %d64 = tile.extsi %diff : tensor<64x32xi32> -> tensor<64x32xi64>
  tile.store %d64, %y64[%m0, %n0] : tensor<64x32xi64> -> !tile.desc<?x?xi64, box = [64, 32]>
  func.return
}

// y[i, j] = trunci(extsi(x[i, j]) * k + (i - j)) on 64 x 128 tiles of i8 (wrapping).
func.func @affine_i8(%x: !tile.desc<?x?xi8, box = [64, 128]> {tile.dims = ["M", "N"]},
    %k: i32,
    %y: !tile.desc<?x?xi8, box = [64, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %x8 = tile.load %x[%m0, %n0] : !tile.desc<?x?xi8, box = [64, 128]> -> tensor<64x128xi8>
  %xt = tile.extsi %x8 : tensor<64x128xi8> -> tensor<64x128xi32>
  %iota = tile.iota : tensor<64xi32>
  %iota128 = tile.iota : tensor<128xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %n0_i32 = arith.index_cast %n0 : index to i32
  %m0_t = tile.splat %m0_i32 : i32 -> tensor<64x1xi32>
  %n0_t = tile.splat %n0_i32 : i32 -> tensor<1x128xi32>
  %r1 = tile.expand_dims %iota, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %c1 = tile.expand_dims %iota128, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %rows_c = arith.addi %r1, %m0_t : tensor<64x1xi32>
  %cols_r = arith.addi %c1, %n0_t : tensor<1x128xi32>
  %rows = tile.broadcast %rows_c : tensor<64x1xi32> -> tensor<64x128xi32>
  %cols = tile.broadcast %cols_r : tensor<1x128xi32> -> tensor<64x128xi32>
  %k_t = tile.splat %k : i32 -> tensor<64x128xi32>
  %scaled = arith.muli %xt, %k_t : tensor<64x128xi32>
  %diff = arith.subi %rows, %cols : tensor<64x128xi32>
  %sum = arith.addi %scaled, %diff : tensor<64x128xi32>
  %yt = tile.trunci %sum : tensor<64x128xi32> -> tensor<64x128xi8>
  tile.store %yt, %y[%m0, %n0] : tensor<64x128xi8> -> !tile.desc<?x?xi8, box = [64, 128]>
  func.return
}
