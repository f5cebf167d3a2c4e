// Column reductions (tile.reduce along axis 0): each column of a tile combined
// over its rows, which the consumer warps hold in 16-row slabs, so the partials
// meet in a shared-memory scratch (`nvgpu_async.column_reduce`).
//
//   @column_range:     o[p, n] = max_m x[m, n] - min_m x[m, n] over the rows m of
//                      row tile p (two reductions, one scratch), x loaded
//   @gemm_column_sums: o[p, n] = sum_m (A @ B^T)[m, n] over the rows m of row
//                      tile p: the per-tile partials of a bias gradient
//   @center_columns, @column_max_192, @gemm_dbias, @int_columns,
//   @bf16_column_sums, @f16_column_max, @masked_column_max,
//   @short_column_sums40, @short_column_max24: below
func.func @column_range(%x: !tile.desc<?x?xf32, box = [128, 64]>,
    %o: !tile.desc<?x?xf32, box = [1, 64]>) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %hi = tile.reduce max %t, axis = 0 : tensor<128x64xf32> -> tensor<64xf32>
  %lo = tile.reduce min %t, axis = 0 : tensor<128x64xf32> -> tensor<64xf32>
  %r = arith.subf %hi, %lo : tensor<64xf32>
  tile.store %r, %o[%pid_m, %n0] : tensor<64xf32> -> !tile.desc<?x?xf32, box = [1, 64]>
  func.return
}

func.func @gemm_column_sums(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %o: !tile.desc<?x?xf32, box = [1, 128]>) attributes {tile.kernel} {
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
  %s = tile.reduce sum %acc, axis = 0 : tensor<128x128xf32> -> tensor<128xf32>
  tile.store %s, %o[%pid_m, %n0] : tensor<128xf32> -> !tile.desc<?x?xf32, box = [1, 128]>
  func.return
}


//   @center_columns:   o[m, n] = x[m, n] - mean over the rows of x's row tile
//                      of column n: the reduction broadcast back down the
//                      rows, the tile stored through TMA (whose staging tile
//                      the consumer barriers also guard)
func.func @center_columns(%x: !tile.desc<?x?xf32, box = [128, 64]>,
    %o: !tile.desc<?x?xf32, box = [128, 64]>) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %s = tile.reduce sum %t, axis = 0 : tensor<128x64xf32> -> tensor<64xf32>
  %inv = arith.constant dense<7.812500e-03> : tensor<64xf32>
  %mean = arith.mulf %s, %inv : tensor<64xf32>
  %row = tile.expand_dims %mean, axis = 0 : tensor<64xf32> -> tensor<1x64xf32>
  %b = tile.broadcast %row : tensor<1x64xf32> -> tensor<128x64xf32>
  %c = arith.subf %t, %b : tensor<128x64xf32>
  tile.store %c, %o[%m0, %n0] : tensor<128x64xf32> -> !tile.desc<?x?xf32, box = [128, 64]>
  func.return
}

//   @column_max_192:   o[p, n] = max over the 192 rows m of row tile p of
//                      x[m, n]: three consumer warpgroups, twelve warps' rows
func.func @column_max_192(%x: !tile.desc<?x?xf32, box = [192, 64]>,
    %o: !tile.desc<?x?xf32, box = [1, 64]>) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c64 = arith.constant 64 : index
  %c192 = arith.constant 192 : index
  %m0 = arith.muli %pid_m, %c192 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [192, 64]> -> tensor<192x64xf32>
  %m = tile.reduce max %t, axis = 0 : tensor<192x64xf32> -> tensor<64xf32>
  tile.store %m, %o[%pid_m, %n0] : tensor<64xf32> -> !tile.desc<?x?xf32, box = [1, 64]>
  func.return
}

//   @gemm_dbias:       C = bf16(A @ B^T), and D[p, n] = sum over the rows m of
//                      row tile p of (A @ B^T)[m, n] (a linear layer's output
//                      and its bias gradient's per-tile partials, fused); its
//                      tiles named, so that the tuning resizes them
func.func @gemm_dbias(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %d: !tile.desc<?x?xf32, box = [1, 128]> {tile.dims = ["MT", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 64 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  %s = tile.reduce sum %acc, axis = 0 : tensor<128x128xf32> -> tensor<128xf32>
  tile.store %s, %d[%pid_m, %n0] : tensor<128xf32> -> !tile.desc<?x?xf32, box = [1, 128]>
  func.return
}

//   @int_columns:      o[p, n] = sum_m x[m, n] - max_m x[m, n] - min_m x[m, n]
//                      over the rows m of row tile p, in i32 (the sums wrap,
//                      as add.s32 does)
func.func @int_columns(%x: !tile.desc<?x?xi32, box = [128, 64]>,
    %o: !tile.desc<?x?xi32, box = [1, 64]>) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xi32, box = [128, 64]> -> tensor<128x64xi32>
  %s = tile.reduce sum %t, axis = 0 : tensor<128x64xi32> -> tensor<64xi32>
  %hi = tile.reduce max %t, axis = 0 : tensor<128x64xi32> -> tensor<64xi32>
  %lo = tile.reduce min %t, axis = 0 : tensor<128x64xi32> -> tensor<64xi32>
  %d = arith.subi %s, %hi : tensor<64xi32>
  %r = arith.subi %d, %lo : tensor<64xi32>
  tile.store %r, %o[%pid_m, %n0] : tensor<64xi32> -> !tile.desc<?x?xi32, box = [1, 64]>
  func.return
}

//   @bf16_column_sums: o[p, n] = bf16(sum_m x[m, n]) over the rows m of row
//                      tile p, x bf16: reduced in f32 (extended first, the
//                      sums rounded once), as the interpreter defines it
func.func @bf16_column_sums(%x: !tile.desc<?x?xbf16, box = [128, 64]>,
    %o: !tile.desc<?x?xbf16, box = [1, 64]>) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
  %s = tile.reduce sum %t, axis = 0 : tensor<128x64xbf16> -> tensor<64xbf16>
  tile.store %s, %o[%pid_m, %n0] : tensor<64xbf16> -> !tile.desc<?x?xbf16, box = [1, 64]>
  func.return
}

//   @f16_column_max:   o[p, n] = max over the 64 rows m of row tile p of
//                      x[m, n], x f16 (one consumer warpgroup)
func.func @f16_column_max(%x: !tile.desc<?x?xf16, box = [64, 64]>,
    %o: !tile.desc<?x?xf16, box = [1, 64]>) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf16, box = [64, 64]> -> tensor<64x64xf16>
  %m = tile.reduce max %t, axis = 0 : tensor<64x64xf16> -> tensor<64xf16>
  tile.store %m, %o[%pid_m, %n0] : tensor<64xf16> -> !tile.desc<?x?xf16, box = [1, 64]>
  func.return
}

//   @masked_column_max: o[p, n] = max over the rows m < M of row tile p of
//                      x[m, n]: the rows past the tensor's end, which TMA
//                      fills with zeros, masked to -inf so they take no part
//                      (unmasked, a column of negative values would have
//                      the maximum 0 in the last tile)
func.func @masked_column_max(%x: !tile.desc<?x?xf32, box = [128, 32]>,
    %o: !tile.desc<?x?xf32, box = [1, 32]>) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %M = tile.dim %x, 0 : !tile.desc<?x?xf32, box = [128, 32]>
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c32 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [128, 32]> -> tensor<128x32xf32>
  %iota = tile.iota : tensor<128xi32>
  %rows_1d = tile.expand_dims %iota, axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %left = arith.subi %M, %m0 : index
  %left_i32 = arith.index_cast %left : index to i32
  %left_t = tile.splat %left_i32 : i32 -> tensor<128x1xi32>
  %in_1d = tile.cmpi slt, %rows_1d, %left_t : tensor<128x1xi32> -> tensor<128x1xi1>
  %in = tile.broadcast %in_1d : tensor<128x1xi1> -> tensor<128x32xi1>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<128x32xf32>
  %masked = tile.select %in, %t, %neg_inf : tensor<128x32xi1>, tensor<128x32xf32>
  %m = tile.reduce max %masked, axis = 0 : tensor<128x32xf32> -> tensor<32xf32>
  tile.store %m, %o[%pid_m, %n0] : tensor<32xf32> -> !tile.desc<?x?xf32, box = [1, 32]>
  func.return
}

// Column reductions of tiles under 64 rows, held padded to one 64-row block:
// the padding rows read the tile's own rows (a sum would count them again) or
// hold row ids past the tile (a max would take them), so they are masked out.
//   @short_column_sums40: o[p, n] = sum_m x[m, n] over 40-row tile p (its last
//                         warp half padding)
//   @short_column_max24:  o[p, n] = max_m (x[m, n] + m) over 24-row tile p
func.func @short_column_sums40(%x: !tile.desc<?x?xf32, box = [40, 64]>,
    %o: !tile.desc<?x?xf32, box = [1, 64]>) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c40 = arith.constant 40 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c40 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [40, 64]> -> tensor<40x64xf32>
  %s = tile.reduce sum %t, axis = 0 : tensor<40x64xf32> -> tensor<64xf32>
  tile.store %s, %o[%pid_m, %n0] : tensor<64xf32> -> !tile.desc<?x?xf32, box = [1, 64]>
  func.return
}

func.func @short_column_max24(%x: !tile.desc<?x?xf32, box = [24, 32]>,
    %o: !tile.desc<?x?xf32, box = [1, 32]>) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c24 = arith.constant 24 : index
  %c32 = arith.constant 32 : index
  %m0 = arith.muli %pid_m, %c24 : index
  %n0 = arith.muli %pid_n, %c32 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [24, 32]> -> tensor<24x32xf32>
  %i = tile.iota : tensor<24xi32>
  %f = tile.sitofp %i : tensor<24xi32> -> tensor<24xf32>
  %f_e = tile.expand_dims %f, axis = 1 : tensor<24xf32> -> tensor<24x1xf32>
  %f_b = tile.broadcast %f_e : tensor<24x1xf32> -> tensor<24x32xf32>
  %r = arith.addf %t, %f_b : tensor<24x32xf32>
  %m = tile.reduce max %r, axis = 0 : tensor<24x32xf32> -> tensor<32xf32>
  tile.store %m, %o[%pid_m, %n0] : tensor<32xf32> -> !tile.desc<?x?xf32, box = [1, 32]>
  func.return
}
