// Row kernels an outside user writes (the third sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py):
//   @rmsnorm:       y = bf16(x rsqrt(mean(x^2) + eps) w), rows of N <= 128, an f32 weight row
//   @layernorm:     y = (x - mean) rsqrt(var + eps) g + b in f32, N <= 128, the columns past N
//                   masked out of the variance
//   @row_range:     o[m] = max_n x[m, n] - min_n x[m, n] over any width (reduce max and min)
//   @softmax_2pass: y = softmax(x) over rows of any width: an online max and sum, then a
//                   second loop reloading x and storing each block (stores in a loop)
//   @halve_loop:    y = x 0.5^n: a loaded tile carried by an scf.for and updated in registers
//   @halve_while:   the same with an scf.while counting in i32
//   @scale_unless:  y = flag ? x : 2 x: an scf.if yielding the loaded tile or a register tile
//   @store_carried: y = x, z = n x: a loop carrying the loaded x unchanged next to a sum,
//                   both stored after it
//   @pick_loaded:   y = flag ? a : b: a branch yielding one of two loaded tiles, stored
//   @pick_bf16:     y = f32(flag ? b : bf16(f32(a))): a branch yielding a loaded bf16 tile
//                   or a computed one
//   @store_in_if:   y = x where flag: a loaded tile stored inside a branch
//   @repeat_rows:   y[r] = x for every r: a loaded tile stored from a loop
// (@halve_loop, @halve_while and @scale_unless were refused: "cannot read the shared
// tile %v here", @pick_bf16 failed in distribute-fragments; a value a loop carries or
// a branch yields is a shared-memory view only when every value copied into it is one
// and no store reads it. @store_carried, @pick_loaded, @store_in_if, @repeat_rows: "tile.store
// of %t, a loaded tile carried through a loop or a branch: store it where it is loaded".)
// Grids: (ceil(M / 64),) (the last eight: (ceil(M / 64), ceil(N / 64))).

// RMSNorm of rows that fit one 128-wide tile: y = bf16(x rsqrt(mean(x^2) + eps) w).
func.func @rmsnorm(%x: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["M", "N"]},
    %w: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %y: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["M", "N"]},
    %eps: f32) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xbf16, box = [64, 128]>
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xbf16, box = [64, 128]> -> tensor<64x128xbf16>
  %wt = tile.load %w[%c0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %xf = arith.extf %t : tensor<64x128xbf16> to tensor<64x128xf32>
  %sq = arith.mulf %xf, %xf : tensor<64x128xf32>
  %ss = tile.reduce sum %sq, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %n_i32 = arith.index_cast %N : index to i32
  %n_f = arith.sitofp %n_i32 : i32 to f32
  %n_t = tile.splat %n_f : f32 -> tensor<64xf32>
  %eps_t = tile.splat %eps : f32 -> tensor<64xf32>
  %ms = arith.divf %ss, %n_t : tensor<64xf32>
  %mse = arith.addf %ms, %eps_t : tensor<64xf32>
  %r = math.rsqrt %mse : tensor<64xf32>
  %r_e = tile.expand_dims %r, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %r_b = tile.broadcast %r_e : tensor<64x1xf32> -> tensor<64x128xf32>
  %w_e = tile.expand_dims %wt, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %w_b = tile.broadcast %w_e : tensor<1x128xf32> -> tensor<64x128xf32>
  %xn = arith.mulf %xf, %r_b : tensor<64x128xf32>
  %out = arith.mulf %xn, %w_b : tensor<64x128xf32>
  %o = arith.truncf %out : tensor<64x128xf32> to tensor<64x128xbf16>
  tile.store %o, %y[%m0, %c0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}

// LayerNorm of f32 rows that fit one 128-wide tile, columns past N masked out of the
// variance: y = (x - mean) rsqrt(var + eps) g + b.
func.func @layernorm(%x: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]},
    %g: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %b: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %y: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]},
    %eps: f32) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 128]>
  %m0 = arith.muli %pid, %c64 : index
  %xt = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [64, 128]> -> tensor<64x128xf32>
  %gt = tile.load %g[%c0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %bt = tile.load %b[%c0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %n_i32 = arith.index_cast %N : index to i32
  %n_f = arith.sitofp %n_i32 : i32 to f32
  %n_t = tile.splat %n_f : f32 -> tensor<64xf32>
  %eps_t = tile.splat %eps : f32 -> tensor<64xf32>
  %s = tile.reduce sum %xt, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %mean = arith.divf %s, %n_t : tensor<64xf32>
  %mean_e = tile.expand_dims %mean, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %mean_b = tile.broadcast %mean_e : tensor<64x1xf32> -> tensor<64x128xf32>
  %d = arith.subf %xt, %mean_b : tensor<64x128xf32>
  %n_ti = tile.splat %n_i32 : i32 -> tensor<64x128xi32>
  %iota = tile.iota : tensor<128xi32>
  %cols = tile.expand_dims %iota, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cols_b = tile.broadcast %cols : tensor<1x128xi32> -> tensor<64x128xi32>
  %inside = tile.cmpi slt, %cols_b, %n_ti : tensor<64x128xi32> -> tensor<64x128xi1>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %dm = tile.select %inside, %d, %zero : tensor<64x128xi1>, tensor<64x128xf32>
  %d2 = arith.mulf %dm, %dm : tensor<64x128xf32>
  %v = tile.reduce sum %d2, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %var = arith.divf %v, %n_t : tensor<64xf32>
  %ve = arith.addf %var, %eps_t : tensor<64xf32>
  %r = math.rsqrt %ve : tensor<64xf32>
  %r_e = tile.expand_dims %r, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %r_b = tile.broadcast %r_e : tensor<64x1xf32> -> tensor<64x128xf32>
  %g_e = tile.expand_dims %gt, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %g_b = tile.broadcast %g_e : tensor<1x128xf32> -> tensor<64x128xf32>
  %b_e = tile.expand_dims %bt, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %b_b = tile.broadcast %b_e : tensor<1x128xf32> -> tensor<64x128xf32>
  %xn = arith.mulf %dm, %r_b : tensor<64x128xf32>
  %xg = arith.mulf %xn, %g_b : tensor<64x128xf32>
  %out = arith.addf %xg, %b_b : tensor<64x128xf32>
  tile.store %out, %y[%m0, %c0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

// Per-row range over any width: o[m] = max_n x[m, n] - min_n x[m, n], a loop
// carrying a running max and min (reduce max and min).
func.func @row_range(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %o: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %big = arith.constant 3.0e38 : f32
  %nbig = arith.constant -3.0e38 : f32
  %lo0 = tile.splat %big : f32 -> tensor<64xf32>
  %hi0 = tile.splat %nbig : f32 -> tensor<64xf32>
  %n_i32 = arith.index_cast %N : index to i32
  %n_t = tile.splat %n_i32 : i32 -> tensor<64x64xi32>
  %iota = tile.iota : tensor<64xi32>
  %cols = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %big_t = tile.splat %big : f32 -> tensor<64x64xf32>
  %nbig_t = tile.splat %nbig : f32 -> tensor<64x64xf32>
  %lo, %hi = scf.for %n = %c0 to %N step %c64 iter_args(%l = %lo0, %h = %hi0) -> (tensor<64xf32>, tensor<64xf32>) {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %n_c = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_c : i32 -> tensor<1x64xi32>
    %kc = arith.addi %cols, %n_row : tensor<1x64xi32>
    %kcb = tile.broadcast %kc : tensor<1x64xi32> -> tensor<64x64xi32>
    %in = tile.cmpi slt, %kcb, %n_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %tl = tile.select %in, %t, %big_t : tensor<64x64xi1>, tensor<64x64xf32>
    %th = tile.select %in, %t, %nbig_t : tensor<64x64xi1>, tensor<64x64xf32>
    %bl = tile.reduce min %tl, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %bh = tile.reduce max %th, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %l2 = arith.minimumf %l, %bl : tensor<64xf32>
    %h2 = arith.maximumf %h, %bh : tensor<64xf32>
    scf.yield %l2, %h2 : tensor<64xf32>, tensor<64xf32>
  }
  %r = arith.subf %hi, %lo : tensor<64xf32>
  tile.store %r, %o[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}

// Two-pass softmax over rows of any width: pass 1 an online max and sum, pass 2
// reloads x and stores exp(x - m) / l block by block (stores inside a loop).
func.func @softmax_2pass(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %ninf = arith.constant 0xFF800000 : f32
  %big_neg = arith.constant -1.0e30 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x64xf32>
  %m_init = tile.splat %big_neg : f32 -> tensor<64xf32>
  %l_init = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %n_i32 = arith.index_cast %N : index to i32
  %n_t = tile.splat %n_i32 : i32 -> tensor<64x64xi32>
  %iota = tile.iota : tensor<64xi32>
  %cols = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %m_f, %l_f = scf.for %n = %c0 to %N step %c64 iter_args(%m_i = %m_init, %l_i = %l_init) -> (tensor<64xf32>, tensor<64xf32>) {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %n_c = arith.index_cast %n : index to i32
    %n_row = tile.splat %n_c : i32 -> tensor<1x64xi32>
    %kc = arith.addi %cols, %n_row : tensor<1x64xi32>
    %kcb = tile.broadcast %kc : tensor<1x64xi32> -> tensor<64x64xi32>
    %in = tile.cmpi slt, %kcb, %n_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %tm = tile.select %in, %t, %neg_inf : tensor<64x64xi1>, tensor<64x64xf32>
    %bm = tile.reduce max %tm, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %m_new = arith.maximumf %m_i, %bm : tensor<64xf32>
    %m_e = tile.expand_dims %m_new, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
    %sh = arith.subf %tm, %m_b : tensor<64x64xf32>
    %p = math.exp %sh : tensor<64x64xf32>
    %ps = tile.reduce sum %p, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %md = arith.subf %m_i, %m_new : tensor<64xf32>
    %al = math.exp %md : tensor<64xf32>
    %ls = arith.mulf %l_i, %al : tensor<64xf32>
    %l_new = arith.addf %ls, %ps : tensor<64xf32>
    scf.yield %m_new, %l_new : tensor<64xf32>, tensor<64xf32>
  }
  %m_e = tile.expand_dims %m_f, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %m_b = tile.broadcast %m_e : tensor<64x1xf32> -> tensor<64x64xf32>
  %l_e = tile.expand_dims %l_f, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %l_b = tile.broadcast %l_e : tensor<64x1xf32> -> tensor<64x64xf32>
  scf.for %n = %c0 to %N step %c64 {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %sh = arith.subf %t, %m_b : tensor<64x64xf32>
    %p = math.exp %sh : tensor<64x64xf32>
    %o = arith.divf %p, %l_b : tensor<64x64xf32>
    tile.store %o, %y[%m0, %n] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  }
  func.return
}

// y = x 0.5^n: a loaded tile carried through an scf.for and halved each iteration.
func.func @halve_loop(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}, %n: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %half = arith.constant dense<5.000000e-01> : tensor<64x64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %t) -> (tensor<64x64xf32>) {
    %h = arith.mulf %v, %half : tensor<64x64xf32>
    scf.yield %h : tensor<64x64xf32>
  }
  tile.store %r, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// y = x 0.5^n with an scf.while counting in i32: the loaded tile carried and halved.
func.func @halve_while(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}, %n: i32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %half = arith.constant dense<5.000000e-01> : tensor<64x64xf32>
  %c0i = arith.constant 0 : i32
  %c1i = arith.constant 1 : i32
  %res:2 = scf.while (%v = %t, %i = %c0i) : (tensor<64x64xf32>, i32) -> (tensor<64x64xf32>, i32) {
    %more = arith.cmpi slt, %i, %n : i32
    scf.condition(%more) %v, %i : tensor<64x64xf32>, i32
  } do {
  ^bb0(%v2: tensor<64x64xf32>, %i2: i32):
    %h = arith.mulf %v2, %half : tensor<64x64xf32>
    %i3 = arith.addi %i2, %c1i : i32
    scf.yield %h, %i3 : tensor<64x64xf32>, i32
  }
  tile.store %res#0, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// y = flag != 0 ? x : 2 x: a branch yielding the loaded tile or a register tile.
func.func @scale_unless(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}, %flag: i32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %two = arith.constant dense<2.000000e+00> : tensor<64x64xf32>
  %c0i = arith.constant 0 : i32
  %keep = arith.cmpi ne, %flag, %c0i : i32
  %r = scf.if %keep -> (tensor<64x64xf32>) {
    scf.yield %t : tensor<64x64xf32>
  } else {
    %d = arith.mulf %t, %two : tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %r, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// y = x after a loop that carries the loaded x unchanged (next to a register sum s
// stored to z): the carried view stored.
func.func @store_carried(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %z: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}, %n: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %v, %s = scf.for %i = %c0 to %n step %c1 iter_args(%vv = %t, %ss = %zero) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
    %s2 = arith.addf %ss, %vv : tensor<64x64xf32>
    scf.yield %vv, %s2 : tensor<64x64xf32>, tensor<64x64xf32>
  }
  tile.store %v, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  tile.store %s, %z[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// y = flag != 0 ? a : b, both loaded: a branch yielding one of two loaded tiles, stored.
func.func @pick_loaded(%a: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %b: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}, %flag: i32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %ta = tile.load %a[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %tb = tile.load %b[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %c0i = arith.constant 0 : i32
  %keep = arith.cmpi ne, %flag, %c0i : i32
  %r = scf.if %keep -> (tensor<64x64xf32>) {
    scf.yield %ta : tensor<64x64xf32>
  } else {
    scf.yield %tb : tensor<64x64xf32>
  }
  tile.store %r, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// y = x where flag != 0: the loaded tile stored inside a branch.
func.func @store_in_if(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}, %flag: i32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %c0i = arith.constant 0 : i32
  %keep = arith.cmpi ne, %flag, %c0i : i32
  scf.if %keep {
    tile.store %t, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  }
  func.return
}

// y[r] = x for r < R: one loaded tile stored R times from a loop (y: [R, M, N]).
func.func @repeat_rows(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?x?xf32, box = [1, 64, 64]> {tile.dims = ["R", "M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %R = tile.dim %y, 0 : !tile.desc<?x?x?xf32, box = [1, 64, 64]>
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %t = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  scf.for %r = %c0 to %R step %c1 {
    tile.store %t, %y[%r, %m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?x?xf32, box = [1, 64, 64]>
  }
  func.return
}

// y = f32(flag != 0 ? b : bf16(f32(a))): a branch yielding a loaded bf16 tile or a bf16
// tile computed in registers (the 16-bit view read into registers at the yield).
func.func @pick_bf16(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}, %flag: i32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %ta = tile.load %a[%m0, %n0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %tb = tile.load %b[%m0, %n0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %c0i = arith.constant 0 : i32
  %on = arith.cmpi ne, %flag, %c0i : i32
  %r = scf.if %on -> (tensor<64x64xbf16>) {
    scf.yield %tb : tensor<64x64xbf16>
  } else {
    %x = arith.extf %ta : tensor<64x64xbf16> to tensor<64x64xf32>
    %t = arith.truncf %x : tensor<64x64xf32> to tensor<64x64xbf16>
    scf.yield %t : tensor<64x64xbf16>
  }
  %f = arith.extf %r : tensor<64x64xbf16> to tensor<64x64xf32>
  tile.store %f, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
