// Kernels with no tile.dot an outside user writes (the fifth sweep of valid but
// unusual kernels, tests/test_sweep_kernels.py):
//   @layernorm_stats: y = f16((x - mean) rstd), mean[m] and rstd[m] over rows of any width:
//                     three outputs, a loop summing x and x^2, then a loop storing y
//   @fill:            y = 1.5: a store of a constant tile, no load
//   @unused_load:     y = 2 x, a tile of z loaded and never used
//   @int_bits:        y = f32(max((((7 r) xor c) and 15) << 1 >> 1, 3)): i32 bit operations
//                     on tiles of row and column indices, no load
//   @axpb_1d:         y = 2 x + 1 over a 1-D tensor in 256-element tiles
//   @nprog:           y = x + num_programs(x) + 10 num_programs(y): the grid's size in the math
//   @overwrite:       y = x + 1, then y = 2 x over the same tile: the second store wins
//   @overlap_sum:     o[m] = sum of x[m, n : n + 64] for n in 0, 32, 64, ...: a loop
//                     stepping 32 over 64-wide boxes (overlapping loads)
//   @scalars:         y = flag ? x h + n : x - s: scalar parameters i1, i64, f16 and bf16
//   @rowmax_f16:      o[m] = f16(max(max_n x[m, n], 0)) over any width: an f16 vector output
//   @block_scale:     y = x s[m / 64, 0]: one scale a row block, picked from a 16-byte row of
//                     a [M / 64, 4] table by tile.extract
// Grids: (ceil(M / 64), ceil(N / 64)) (@layernorm_stats, @overlap_sum and @rowmax_f16:
// (ceil(M / 64),); @axpb_1d: (ceil(N / 256),)).

// LayerNorm over rows of any width, three outputs: y = f16((x - mean) rstd), mean[m] and
// rstd[m] = 1 / sqrt(var + eps); a loop summing x and x^2, then a loop normalizing and
// storing each block.
func.func @layernorm_stats(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %mean_o: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]},
    %rstd_o: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]},
    %eps: f32) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %s, %ss = scf.for %n = %c0 to %N step %c64 iter_args(%s_i = %zero, %ss_i = %zero) -> (tensor<64xf32>, tensor<64xf32>) {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %bs = tile.reduce sum %t, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %sq = arith.mulf %t, %t : tensor<64x64xf32>
    %bss = tile.reduce sum %sq, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %s2 = arith.addf %s_i, %bs : tensor<64xf32>
    %ss2 = arith.addf %ss_i, %bss : tensor<64xf32>
    scf.yield %s2, %ss2 : tensor<64xf32>, tensor<64xf32>
  }
  %n_i32 = arith.index_cast %N : index to i32
  %n_f = arith.sitofp %n_i32 : i32 to f32
  %n_t = tile.splat %n_f : f32 -> tensor<64xf32>
  %eps_t = tile.splat %eps : f32 -> tensor<64xf32>
  %mean = arith.divf %s, %n_t : tensor<64xf32>
  %ex2 = arith.divf %ss, %n_t : tensor<64xf32>
  %m2 = arith.mulf %mean, %mean : tensor<64xf32>
  %var = arith.subf %ex2, %m2 : tensor<64xf32>
  %ve = arith.addf %var, %eps_t : tensor<64xf32>
  %rstd = math.rsqrt %ve : tensor<64xf32>
  tile.store %mean, %mean_o[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  tile.store %rstd, %rstd_o[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  %mean_e = tile.expand_dims %mean, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %mean_b = tile.broadcast %mean_e : tensor<64x1xf32> -> tensor<64x64xf32>
  %r_e = tile.expand_dims %rstd, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %r_b = tile.broadcast %r_e : tensor<64x1xf32> -> tensor<64x64xf32>
  scf.for %n = %c0 to %N step %c64 {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %d = arith.subf %t, %mean_b : tensor<64x64xf32>
    %o = arith.mulf %d, %r_b : tensor<64x64xf32>
    %oh = arith.truncf %o : tensor<64x64xf32> to tensor<64x64xf16>
    tile.store %oh, %y[%m0, %n] : tensor<64x64xf16> -> !tile.desc<?x?xf16, box = [64, 64]>
  }
  func.return
}

// y = 1.5 everywhere: a store of a constant tile, no load.
func.func @fill(%y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %v = arith.constant dense<1.500000e+00> : tensor<64x64xf32>
  tile.store %v, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// y = 2 x, with a tile of z loaded and never used.
func.func @unused_load(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %z: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %u = tile.load %z[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %two = arith.constant dense<2.000000e+00> : tensor<64x64xf32>
  %v = arith.mulf %t, %two : tensor<64x64xf32>
  tile.store %v, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// y = f32(max((((7 r) xor c) and 15) << 1 >> 1, 3)), r and c the element's row and column.
func.func @int_bits(%y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %m0i = arith.index_cast %m0 : index to i32
  %n0i = arith.index_cast %n0 : index to i32
  %io = tile.iota : tensor<64xi32>
  %rc = tile.expand_dims %io, axis = 1 : tensor<64xi32> -> tensor<64x1xi32>
  %rb = tile.broadcast %rc : tensor<64x1xi32> -> tensor<64x64xi32>
  %cr = tile.expand_dims %io, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %cb = tile.broadcast %cr : tensor<1x64xi32> -> tensor<64x64xi32>
  %m0t = tile.splat %m0i : i32 -> tensor<64x64xi32>
  %n0t = tile.splat %n0i : i32 -> tensor<64x64xi32>
  %row = arith.addi %rb, %m0t : tensor<64x64xi32>
  %col = arith.addi %cb, %n0t : tensor<64x64xi32>
  %seven = arith.constant dense<7> : tensor<64x64xi32>
  %r7 = arith.muli %row, %seven : tensor<64x64xi32>
  %x = arith.xori %r7, %col : tensor<64x64xi32>
  %f15 = arith.constant dense<15> : tensor<64x64xi32>
  %a = arith.andi %x, %f15 : tensor<64x64xi32>
  %one = arith.constant dense<1> : tensor<64x64xi32>
  %sh = arith.shli %a, %one : tensor<64x64xi32>
  %sr = arith.shrsi %sh, %one : tensor<64x64xi32>
  %three = arith.constant dense<3> : tensor<64x64xi32>
  %mx = arith.maxsi %sr, %three : tensor<64x64xi32>
  %f = tile.sitofp %mx : tensor<64x64xi32> -> tensor<64x64xf32>
  tile.store %f, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// y[i] = 2 x[i] + 1 over a 1-D tensor in 256-element tiles.
func.func @axpb_1d(%x: !tile.desc<?xf32, box = [256]> {tile.dims = ["N"]},
    %y: !tile.desc<?xf32, box = [256]> {tile.dims = ["N"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c256 = arith.constant 256 : index
  %i0 = arith.muli %pid, %c256 : index
  %t = tile.load %x[%i0] : !tile.desc<?xf32, box = [256]> -> tensor<256xf32>
  %two = arith.constant dense<2.000000e+00> : tensor<256xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<256xf32>
  %a = arith.mulf %t, %two : tensor<256xf32>
  %b = arith.addf %a, %one : tensor<256xf32>
  tile.store %b, %y[%i0] : tensor<256xf32> -> !tile.desc<?xf32, box = [256]>
  func.return
}

// y = x + num_programs(x) + 10 num_programs(y): the grid's size in the math.
func.func @nprog(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %npx = tile.num_programs x
  %npy = tile.num_programs y
  %c10 = arith.constant 10 : index
  %np10 = arith.muli %npy, %c10 : index
  %nps = arith.addi %npx, %np10 : index
  %npi = arith.index_cast %nps : index to i32
  %npf = arith.sitofp %npi : i32 to f32
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %s = tile.splat %npf : f32 -> tensor<64x64xf32>
  %v = arith.addf %t, %s : tensor<64x64xf32>
  tile.store %v, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// y = x + 1, then y = 2 x over the same tile: the second store wins.
func.func @overwrite(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
  %t1 = arith.addf %t, %one : tensor<64x64xf32>
  tile.store %t1, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  %two = arith.constant dense<2.000000e+00> : tensor<64x64xf32>
  %v = arith.mulf %t, %two : tensor<64x64xf32>
  tile.store %v, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// o[m] = sum over n of x[m, n], the loop stepping 32 over 64-wide boxes: each interior
// column counted twice (overlapping loads).
func.func @overlap_sum(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %o: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %s = scf.for %n = %c0 to %N step %c32 iter_args(%acc = %zero) -> (tensor<64xf32>) {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %r = tile.reduce sum %t, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %a2 = arith.addf %acc, %r : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  tile.store %s, %o[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}

// y = flag ? x h + n : x - s: scalars of every kind used (i1, i64, f16, bf16).
func.func @scalars(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %flag: i1, %n: i64, %h: f16, %s: bf16) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %hf = arith.extf %h : f16 to f32
  %sf = arith.extf %s : bf16 to f32
  %nf = arith.sitofp %n : i64 to f32
  %v = scf.if %flag -> (tensor<64x64xf32>) {
    %ht = tile.splat %hf : f32 -> tensor<64x64xf32>
    %nt = tile.splat %nf : f32 -> tensor<64x64xf32>
    %a = arith.mulf %t, %ht : tensor<64x64xf32>
    %b = arith.addf %a, %nt : tensor<64x64xf32>
    scf.yield %b : tensor<64x64xf32>
  } else {
    %st = tile.splat %sf : f32 -> tensor<64x64xf32>
    %b = arith.subf %t, %st : tensor<64x64xf32>
    scf.yield %b : tensor<64x64xf32>
  }
  tile.store %v, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// o[m] = max(max_n x[m, n], 0) in f16 from f32 rows: a vector output of f16.
func.func @rowmax_f16(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %o: !tile.desc<?xf16, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %s = scf.for %n = %c0 to %N step %c64 iter_args(%acc = %zero) -> (tensor<64xf32>) {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %r = tile.reduce max %t, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %a2 = arith.maximumf %acc, %r : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  %h = arith.truncf %s : tensor<64xf32> to tensor<64xf16>
  tile.store %h, %o[%m0] : tensor<64xf16> -> !tile.desc<?xf16, box = [64]>
  func.return
}

// y[m, n] = x[m, n] * s[m / 64]: a per-block scale picked with tile.extract from a
// 2-D [M / 64, 4] f32 table (one 16-byte row per block, its first element used).
func.func @block_scale(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %s: !tile.desc<?x4xf32, box = [1, 4]> {tile.dims = ["MB", ""]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %st = tile.load %s[%pid_m, %c0] : !tile.desc<?x4xf32, box = [1, 4]> -> tensor<4xf32>
  %sv = tile.extract %st[0] : tensor<4xf32>
  %sb = tile.splat %sv : f32 -> tensor<64x64xf32>
  %v = arith.mulf %t, %sb : tensor<64x64xf32>
  tile.store %v, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
