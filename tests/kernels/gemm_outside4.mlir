// GEMM-like kernels an outside user writes (the fourth sweep of valid but unusual
// kernels, tests/test_sweep_kernels.py):
//   @gemm_trans_out:  Ct = bf16(relu(A B^T + bias[n])^T): the output stored transposed
//                     (a store of tile.trans of the epilogue), 128 x 64 tiles stored as
//                     64 x 128 boxes of Ct (N x M) (was refused: "tile.trans of a register
//                     tile is not supported"; canonicalization now moves the transpose up
//                     through the epilogue, the loop and the dot: Ct = B A^T)
//   @gemm_rc_scale:   C = f32(sa[m] sb[n] (A B^T)): a per-row and a per-column scale, on
//                     64 x 192 tiles
//   @gemm_softmax:    P = bf16(softmax_n(s A B^T)): a row softmax epilogue over the whole
//                     N (one 128-wide tile), columns past N masked from tile.dim
//   @gemm_three_out:  C = bf16(A B^T), R = f16(relu(A B^T)), mx[m] = max_n (A B^T): three
//                     outputs on 192 x 64 tiles (N <= 64)
//   @bgemm_4d:        C[b, h] = bf16(A[b, h] B[b, h]^T), 4-D tensors: grid x folds the
//                     (m, n) tiles and y the (b, h) pairs, unfolded with arith.divsi and
//                     arith.remsi on the program ids
//   @gemm_store_twice: the same bf16 tile stored into two outputs
//   @gemm_grid_stride: the user's own persistent loop: program p walks the output tiles
//                     p, p + P, ... (P = tile.num_programs, the grid chosen by the caller),
//                     a K loop and a store in each iteration
//   @gemm_bias_first_row: C = A B^T + bias[n] on the first row of tiles only: an scf.if
//                     on the program id yielding the accumulator or its sum with a loaded row
// Grids: (ceil(M / BM), ceil(N / BN)) (@gemm_trans_out alike; @gemm_softmax and
// @gemm_three_out: x only; @bgemm_4d: (tiles_m tiles_n, B H); @gemm_grid_stride: any
// (P,), given at the call).

// Ct = bf16(relu(A B^T + bias[n])^T), Ct stored N x M: the 128 x 64 epilogue tile
// transposed and stored as a 64 x 128 box at (n0, m0).
func.func @gemm_trans_out(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xf32, box = [64]> {tile.dims = ["N"]},
    %ct: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["N", "M"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %next : tensor<128x64xf32>
  }
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xf32, box = [64]> -> tensor<64xf32>
  %bias_row = tile.expand_dims %bias_t, axis = 0 : tensor<64xf32> -> tensor<1x64xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x64xf32> -> tensor<128x64xf32>
  %biased = arith.addf %acc, %bias_b : tensor<128x64xf32>
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %relu = arith.maximumf %biased, %zeros : tensor<128x64xf32>
  %out = arith.truncf %relu : tensor<128x64xf32> to tensor<128x64xbf16>
  %out_t = tile.trans %out : tensor<128x64xbf16> -> tensor<64x128xbf16>
  tile.store %out_t, %ct[%n0, %m0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}

// C = f32(sa[m] sb[n] (A B^T)) on 64 x 192 tiles: a column of row scales and a row of
// column scales, both loaded after the K loop.
func.func @gemm_rc_scale(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [192, 64]> {tile.dims = ["N", "K"]},
    %sa: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]},
    %sb: !tile.desc<?xf32, box = [192]> {tile.dims = ["N"]},
    %c: !tile.desc<?x?xf32, box = [64, 192]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c192 = arith.constant 192 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c192 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x192xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x192xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [192, 64]> -> tensor<192x64xbf16>
    %tbt = tile.trans %tb : tensor<192x64xbf16> -> tensor<64x192xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x192xbf16> -> tensor<64x192xf32>
    scf.yield %next : tensor<64x192xf32>
  }
  %sa_t = tile.load %sa[%m0] : !tile.desc<?xf32, box = [64]> -> tensor<64xf32>
  %sa_col = tile.expand_dims %sa_t, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %sa_b = tile.broadcast %sa_col : tensor<64x1xf32> -> tensor<64x192xf32>
  %sb_t = tile.load %sb[%n0] : !tile.desc<?xf32, box = [192]> -> tensor<192xf32>
  %sb_row = tile.expand_dims %sb_t, axis = 0 : tensor<192xf32> -> tensor<1x192xf32>
  %sb_b = tile.broadcast %sb_row : tensor<1x192xf32> -> tensor<64x192xf32>
  %x = arith.mulf %acc, %sa_b : tensor<64x192xf32>
  %y = arith.mulf %x, %sb_b : tensor<64x192xf32>
  tile.store %y, %c[%m0, %n0] : tensor<64x192xf32> -> !tile.desc<?x?xf32, box = [64, 192]>
  func.return
}

// P = bf16(softmax over n of s (A B^T)): N fits one 128-wide tile; columns at or past N
// (zeros from the load) are masked to -inf before the row max.
func.func @gemm_softmax(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %p: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]},
    %scale: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %N = tile.dim %b, 0 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %scale_t = tile.splat %scale : f32 -> tensor<128x128xf32>
  %s = arith.mulf %acc, %scale_t : tensor<128x128xf32>
  %N_i32 = arith.index_cast %N : index to i32
  %N_t = tile.splat %N_i32 : i32 -> tensor<128x128xi32>
  %cols_1d = tile.iota : tensor<128xi32>
  %cols_row = tile.expand_dims %cols_1d, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cols = tile.broadcast %cols_row : tensor<1x128xi32> -> tensor<128x128xi32>
  %inside = tile.cmpi slt, %cols, %N_t : tensor<128x128xi32> -> tensor<128x128xi1>
  %ninf = arith.constant 0xFF800000 : f32
  %ninf_t = tile.splat %ninf : f32 -> tensor<128x128xf32>
  %sm = tile.select %inside, %s, %ninf_t : tensor<128x128xi1>, tensor<128x128xf32>
  %mx = tile.reduce max %sm, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
  %mx_col = tile.expand_dims %mx, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %mx_b = tile.broadcast %mx_col : tensor<128x1xf32> -> tensor<128x128xf32>
  %sh = arith.subf %sm, %mx_b : tensor<128x128xf32>
  %e = math.exp %sh : tensor<128x128xf32>
  %sum = tile.reduce sum %e, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
  %sum_col = tile.expand_dims %sum, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %sum_b = tile.broadcast %sum_col : tensor<128x1xf32> -> tensor<128x128xf32>
  %pr = arith.divf %e, %sum_b : tensor<128x128xf32>
  %out = arith.truncf %pr : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %p[%m0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// Three outputs on 192 x 64 tiles (N <= 64): C = bf16(A B^T), R = f16(relu(A B^T)) and
// the row maxima mx[m] = max_n (A B^T)[m, n] over the N valid columns.
func.func @gemm_three_out(%a: !tile.desc<?x?xbf16, box = [192, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [192, 64]> {tile.dims = ["M", "N"]},
    %r: !tile.desc<?x?xf16, box = [192, 64]> {tile.dims = ["M", "N"]},
    %mx: !tile.desc<?xf32, box = [192]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [192, 64]>
  %N = tile.dim %b, 0 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c192 = arith.constant 192 : index
  %m0 = arith.muli %pid_m, %c192 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<192x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<192x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [192, 64]> -> tensor<192x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<192x64xbf16>, tensor<64x64xbf16> -> tensor<192x64xf32>
    scf.yield %next : tensor<192x64xf32>
  }
  %out = arith.truncf %acc : tensor<192x64xf32> to tensor<192x64xbf16>
  tile.store %out, %c[%m0, %c0] : tensor<192x64xbf16> -> !tile.desc<?x?xbf16, box = [192, 64]>
  %zeros = arith.constant dense<0.000000e+00> : tensor<192x64xf32>
  %relu = arith.maximumf %acc, %zeros : tensor<192x64xf32>
  %relu_h = arith.truncf %relu : tensor<192x64xf32> to tensor<192x64xf16>
  tile.store %relu_h, %r[%m0, %c0] : tensor<192x64xf16> -> !tile.desc<?x?xf16, box = [192, 64]>
  %N_i32 = arith.index_cast %N : index to i32
  %N_t = tile.splat %N_i32 : i32 -> tensor<192x64xi32>
  %cols_1d = tile.iota : tensor<64xi32>
  %cols_row = tile.expand_dims %cols_1d, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cols = tile.broadcast %cols_row : tensor<1x64xi32> -> tensor<192x64xi32>
  %inside = tile.cmpi slt, %cols, %N_t : tensor<192x64xi32> -> tensor<192x64xi1>
  %ninf = arith.constant 0xFF800000 : f32
  %ninf_t = tile.splat %ninf : f32 -> tensor<192x64xf32>
  %masked = tile.select %inside, %acc, %ninf_t : tensor<192x64xi1>, tensor<192x64xf32>
  %row_max = tile.reduce max %masked, axis = 1 : tensor<192x64xf32> -> tensor<192xf32>
  tile.store %row_max, %mx[%m0] : tensor<192xf32> -> !tile.desc<?xf32, box = [192]>
  func.return
}

// A batched GEMM over 4-D tensors [B, H, rows, K]: program x walks the (m, n) tiles
// row-major (m = x / tiles_n, n = x % tiles_n), program y the (b, h) pairs
// (b = y / H, h = y % H), with H a scalar.
func.func @bgemm_4d(%a: !tile.desc<?x?x?x?xbf16, box = [1, 1, 128, 64]> {tile.dims = ["B", "H", "M", "K"]},
    %b: !tile.desc<?x?x?x?xbf16, box = [1, 1, 128, 64]> {tile.dims = ["B", "H", "N", "K"]},
    %c: !tile.desc<?x?x?x?xbf16, box = [1, 1, 128, 128]> {tile.dims = ["B", "H", "M", "N"]},
    %heads: index) attributes {tile.kernel} {
  %pid = tile.program_id x
  %pid_bh = tile.program_id y
  %K = tile.dim %a, 3 : !tile.desc<?x?x?x?xbf16, box = [1, 1, 128, 64]>
  %N = tile.dim %b, 2 : !tile.desc<?x?x?x?xbf16, box = [1, 1, 128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c127 = arith.constant 127 : index
  %c128 = arith.constant 128 : index
  %N_up = arith.addi %N, %c127 : index
  %tiles_n = arith.divsi %N_up, %c128 : index
  %pid_m = arith.divsi %pid, %tiles_n : index
  %pid_n = arith.remsi %pid, %tiles_n : index
  %bi = arith.divsi %pid_bh, %heads : index
  %hi = arith.remsi %pid_bh, %heads : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%bi, %hi, %m0, %k] : !tile.desc<?x?x?x?xbf16, box = [1, 1, 128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%bi, %hi, %n0, %k] : !tile.desc<?x?x?x?xbf16, box = [1, 1, 128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%bi, %hi, %m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?x?x?xbf16, box = [1, 1, 128, 128]>
  func.return
}

// The same bf16 tile stored into two outputs (a copy for a later residual).
func.func @gemm_store_twice(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]},
    %d: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  tile.store %out, %d[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// The user's own persistent loop: program p of P walks the output tiles p, p + P, ...
// (row-major over ceil(M / 128) x ceil(N / 128) tiles), a K loop and a store per tile.
func.func @gemm_grid_stride(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %np = tile.num_programs x
  %M = tile.dim %a, 0 : !tile.desc<?x?xbf16, box = [128, 64]>
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %N = tile.dim %b, 0 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %tiles_m = arith.ceildivsi %M, %c128 : index
  %tiles_n = arith.ceildivsi %N, %c128 : index
  %tiles = arith.muli %tiles_m, %tiles_n : index
  scf.for %t = %pid to %tiles step %np {
    %pm = arith.divsi %t, %tiles_n : index
    %pn = arith.remsi %t, %tiles_n : index
    %m0 = arith.muli %pm, %c128 : index
    %n0 = arith.muli %pn, %c128 : index
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
      %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
      %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
      %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
      %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
      scf.yield %next : tensor<128x128xf32>
    }
    %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
    tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  }
  func.return
}

// C = f32(A B^T + bias[n]) on the first row of tiles, f32(A B^T) elsewhere: a branch on
// the program id yields the accumulator plus the loaded bias row, or the accumulator.
func.func @gemm_bias_first_row(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %bt = tile.load %bias[%n0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %first = arith.cmpi eq, %pid_m, %c0 : index
  %r = scf.if %first -> (tensor<128x128xf32>) {
    %br = tile.expand_dims %bt, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
    %bb = tile.broadcast %br : tensor<1x128xf32> -> tensor<128x128xf32>
    %s = arith.addf %acc, %bb : tensor<128x128xf32>
    scf.yield %s : tensor<128x128xf32>
  } else {
    scf.yield %acc : tensor<128x128xf32>
  }
  tile.store %r, %c[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}
