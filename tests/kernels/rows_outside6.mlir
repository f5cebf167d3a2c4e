// Kernels with no tile.dot an outside user writes (the sixth sweep of valid but unusual
// kernels, tests/test_sweep_kernels.py):
//   @masked_colsum:  s[p, n] = sum over the rows m of row tile p of x[m, n] where
//                    x[m, n] > thr, and cnt[p, n] the count of those rows (i32): a
//                    tile.cmpf-masked column sum and an i32 column count
//   @argmax_columns: idx[p, n] = the first row of the largest x[m, n] over row tile p, i32
//                    in and out: a column max, tile.cmpi against it broadcast down the
//                    rows, and a column min of the candidate rows (rows past M skipped)
// Grids: (ceil(N / 64), ceil(M / 128)).

// s[p, n] = sum over the rows m of row tile p of x[m, n] where x[m, n] > thr (a
// tile.cmpf-masked column sum); cnt[p, n] = the count of those rows, in i32
func.func @masked_colsum(%x: !tile.desc<?x?xf32, box = [128, 64]> {tile.dims = ["M", "N"]},
    %s: !tile.desc<?x?xf32, box = [1, 64]> {tile.dims = ["MT", "N"]},
    %cnt: !tile.desc<?x?xi32, box = [1, 64]> {tile.dims = ["MT", "N"]},
    %thr: f32) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %thr_t = tile.splat %thr : f32 -> tensor<128x64xf32>
  %keep = tile.cmpf ogt, %t, %thr_t : tensor<128x64xf32> -> tensor<128x64xi1>
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %kept = tile.select %keep, %t, %zeros : tensor<128x64xi1>, tensor<128x64xf32>
  %sum = tile.reduce sum %kept, axis = 0 : tensor<128x64xf32> -> tensor<64xf32>
  tile.store %sum, %s[%pid_m, %n0] : tensor<64xf32> -> !tile.desc<?x?xf32, box = [1, 64]>
  %one = arith.constant dense<1> : tensor<128x64xi32>
  %none = arith.constant dense<0> : tensor<128x64xi32>
  %hits = tile.select %keep, %one, %none : tensor<128x64xi1>, tensor<128x64xi32>
  %n = tile.reduce sum %hits, axis = 0 : tensor<128x64xi32> -> tensor<64xi32>
  tile.store %n, %cnt[%pid_m, %n0] : tensor<64xi32> -> !tile.desc<?x?xi32, box = [1, 64]>
  func.return
}

// idx[p, n] = the first row (global) of the largest x[m, n] over row tile p, in i32: an
// argmax per column (i32 column max then min of candidate rows); rows past M are skipped
func.func @argmax_columns(%x: !tile.desc<?x?xi32, box = [128, 64]> {tile.dims = ["M", "N"]},
    %idx: !tile.desc<?x?xi32, box = [1, 64]> {tile.dims = ["MT", "N"]}) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %M = tile.dim %x, 0 : !tile.desc<?x?xi32, box = [128, 64]>
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xi32, box = [128, 64]> -> tensor<128x64xi32>
  %iota = tile.iota : tensor<128xi32>
  %m0_i = arith.index_cast %m0 : index to i32
  %m0_v = tile.splat %m0_i : i32 -> tensor<128xi32>
  %rows1 = arith.addi %iota, %m0_v : tensor<128xi32>
  %rows_c = tile.expand_dims %rows1, axis = 1 : tensor<128xi32> -> tensor<128x1xi32>
  %rows = tile.broadcast %rows_c : tensor<128x1xi32> -> tensor<128x64xi32>
  %M_i = arith.index_cast %M : index to i32
  %M_t = tile.splat %M_i : i32 -> tensor<128x64xi32>
  %inside = tile.cmpi slt, %rows, %M_t : tensor<128x64xi32> -> tensor<128x64xi1>
  %lowest = arith.constant dense<-2147483648> : tensor<128x64xi32>
  %xs = tile.select %inside, %t, %lowest : tensor<128x64xi1>, tensor<128x64xi32>
  %top = tile.reduce max %xs, axis = 0 : tensor<128x64xi32> -> tensor<64xi32>
  %top_r = tile.expand_dims %top, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %top_b = tile.broadcast %top_r : tensor<1x64xi32> -> tensor<128x64xi32>
  %at = tile.cmpi eq, %xs, %top_b : tensor<128x64xi32> -> tensor<128x64xi1>
  %highest = arith.constant dense<2147483647> : tensor<128x64xi32>
  %cand = tile.select %at, %rows, %highest : tensor<128x64xi1>, tensor<128x64xi32>
  %first = tile.reduce min %cand, axis = 0 : tensor<128x64xi32> -> tensor<64xi32>
  tile.store %first, %idx[%pid_m, %n0] : tensor<64xi32> -> !tile.desc<?x?xi32, box = [1, 64]>
  func.return
}
