// Row kernels an outside user writes (the fourth sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py):
//   @xent:         cross-entropy loss[m] = lse_n(x[m, n]) - x[m, t[m]] over rows of any
//                  width: an online max and sum of exp, and the target's logit picked
//                  without a gather: the targets a loaded f32 vector of whole numbers
//                  (written before i32 descriptors and tile.cmpf; see @xent_i32 of
//                  int_tensors.mlir), the hit
//                  max(1 - |t - col|, 0) with col from tile.iota through tile.sitofp
//   @select_chain: y = x where (col % 3 == 0), 2 x where (col % 3 == 1), else f32(row - col):
//                  i32 arithmetic on tiles (arith.remsi, arith.subi) feeding a chain of
//                  tile.selects in i32 and f32
//   @rows_256x32:  y = x + pid_y, o[m] = sum_n x[m, n] over one 32-column block, on 256 x 32
//                  tiles (the row sums of each column block stored to its own row of o)
// Grids: (ceil(M / 64),) (@select_chain: (ceil(M / 64), ceil(N / 64)); @rows_256x32:
// (ceil(M / 256), ceil(N / 32))).

// Cross-entropy over rows of any width V: loss[m] = log sum_n exp(x[m, n]) - x[m, t[m]],
// t[m] the target class, given as a whole f32 (as before i32 descriptors); the logit at
// column t[m] is picked by the weight max(1 - |t[m] - col|, 0), 1 there and 0 elsewhere.
func.func @xent(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "V"]},
    %t: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]},
    %loss: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %V = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %tt = tile.load %t[%m0] : !tile.desc<?xf32, box = [64]> -> tensor<64xf32>
  %tt_col = tile.expand_dims %tt, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %tt_b = tile.broadcast %tt_col : tensor<64x1xf32> -> tensor<64x64xf32>
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
    %cols_f = tile.sitofp %cols : tensor<64x64xi32> -> tensor<64x64xf32>
    %d = arith.subf %tt_b, %cols_f : tensor<64x64xf32>
    %dist = math.absf %d : tensor<64x64xf32>
    %ones = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
    %near = arith.subf %ones, %dist : tensor<64x64xf32>
    %hit = arith.maximumf %near, %zeros : tensor<64x64xf32>
    %picked = arith.mulf %hit, %xt : tensor<64x64xf32>
    %ps = tile.reduce sum %picked, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %p_new = arith.addf %p_i, %ps : tensor<64xf32>
    scf.yield %m_new, %l_new, %p_new : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
  }
  %log_l = math.log %l_f : tensor<64xf32>
  %lse = arith.addf %m_f, %log_l : tensor<64xf32>
  %out = arith.subf %lse, %p_f : tensor<64xf32>
  tile.store %out, %loss[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}

// y[i, j] = x where j % 3 == 0, 2 x where j % 3 == 1, else f32(i - j): i32 tile
// arithmetic (arith.remsi, arith.subi) and a chain of selects, first in i32 (a class
// code), then in f32.
func.func @select_chain(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %xt = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %iota = tile.iota : tensor<64xi32>
  %m0_i32 = arith.index_cast %m0 : index to i32
  %n0_i32 = arith.index_cast %n0 : index to i32
  %m0_t = tile.splat %m0_i32 : i32 -> tensor<64x1xi32>
  %n0_t = tile.splat %n0_i32 : i32 -> tensor<1x64xi32>
  %r1 = tile.expand_dims %iota, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %c1 = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %rows_c = arith.addi %r1, %m0_t : tensor<64x1xi32>
  %cols_r = arith.addi %c1, %n0_t : tensor<1x64xi32>
  %rows = tile.broadcast %rows_c : tensor<64x1xi32> -> tensor<64x64xi32>
  %cols = tile.broadcast %cols_r : tensor<1x64xi32> -> tensor<64x64xi32>
  %three = arith.constant dense<3> : tensor<64x64xi32>
  %zero_i = arith.constant dense<0> : tensor<64x64xi32>
  %one_i = arith.constant dense<1> : tensor<64x64xi32>
  %two_i = arith.constant dense<2> : tensor<64x64xi32>
  %rem = arith.remsi %cols, %three : tensor<64x64xi32>
  %is0 = tile.cmpi eq, %rem, %zero_i : tensor<64x64xi32> -> tensor<64x64xi1>
  %is1 = tile.cmpi eq, %rem, %one_i : tensor<64x64xi32> -> tensor<64x64xi1>
  %code1 = tile.select %is1, %one_i, %two_i : tensor<64x64xi1>, tensor<64x64xi32>
  %code = tile.select %is0, %zero_i, %code1 : tensor<64x64xi1>, tensor<64x64xi32>
  %diff = arith.subi %rows, %cols : tensor<64x64xi32>
  %diff_f = tile.sitofp %diff : tensor<64x64xi32> -> tensor<64x64xf32>
  %two_f = arith.constant dense<2.000000e+00> : tensor<64x64xf32>
  %x2 = arith.mulf %xt, %two_f : tensor<64x64xf32>
  %c_is0 = tile.cmpi eq, %code, %zero_i : tensor<64x64xi32> -> tensor<64x64xi1>
  %c_is1 = tile.cmpi eq, %code, %one_i : tensor<64x64xi32> -> tensor<64x64xi1>
  %v1 = tile.select %c_is1, %x2, %diff_f : tensor<64x64xi1>, tensor<64x64xf32>
  %v = tile.select %c_is0, %xt, %v1 : tensor<64x64xi1>, tensor<64x64xf32>
  tile.store %v, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// 256 x 32 tiles: y = x + pid_y (an f32 tile through 256-row tiles, 32-column blocks),
// and s[pid_y, m] = sum over the block's 32 columns of x[m, n].
func.func @rows_256x32(%x: !tile.desc<?x?xf32, box = [256, 32]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [256, 32]> {tile.dims = ["M", "N"]},
    %s: !tile.desc<?x?xf32, box = [1, 256]> {tile.dims = ["NB", "M"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %m0 = arith.muli %pid_m, %c256 : index
  %n0 = arith.muli %pid_n, %c32 : index
  %xt = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [256, 32]> -> tensor<256x32xf32>
  %pn_i32 = arith.index_cast %pid_n : index to i32
  %pn_f = arith.sitofp %pn_i32 : i32 to f32
  %pn_t = tile.splat %pn_f : f32 -> tensor<256x32xf32>
  %yt = arith.addf %xt, %pn_t : tensor<256x32xf32>
  tile.store %yt, %y[%m0, %n0] : tensor<256x32xf32> -> !tile.desc<?x?xf32, box = [256, 32]>
  %sum = tile.reduce sum %xt, axis = 1 : tensor<256x32xf32> -> tensor<256xf32>
  tile.store %sum, %s[%pid_n, %m0] : tensor<256xf32> -> !tile.desc<?x?xf32, box = [1, 256]>
  func.return
}
