// Row kernels an outside user writes (the ninth sweep of valid but unusual kernels,
// tests/test_sweep_kernels.py):
//   @layernorm_affine: y = bf16(g[n] (x - mean) / sqrt(var + eps) + b[n]) of f16 rows
//                      (N <= 256) on 16-row tiles, columns past N masked out of the
//                      variance, gamma and beta column vectors
//   @softmax_strided:  y[b, s, :] = f16(softmax(x[b, s, :])) of a [B, S, N] f32 tensor
//                      (N <= 128), on a 1-D grid of any size whose programs walk the
//                      B ceil(S / 64) row tiles in a loop stepping by num_programs, each
//                      tile's batch and rows from arith.divsi / arith.remsi
// Grids: (ceil(M / 16),) (@softmax_strided: any (P,)).

// y = bf16(g (x - mean) rsqrt(var + eps) + b), 16-row tiles.
func.func @layernorm_affine(%x: !tile.desc<?x?xf16, box = [16, 256]> {tile.dims = ["M", "N"]},
    %g: !tile.desc<?xf32, box = [256]> {tile.dims = ["N"]},
    %b: !tile.desc<?xf32, box = [256]> {tile.dims = ["N"]},
    %y: !tile.desc<?x?xbf16, box = [16, 256]> {tile.dims = ["M", "N"]},
    %eps: f32) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %m0 = arith.muli %pid, %c16 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf16, box = [16, 256]>
  %N_i = arith.index_cast %N : index to i32
  %N_f = arith.sitofp %N_i : i32 to f32
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf16, box = [16, 256]> -> tensor<16x256xf16>
  %xf = arith.extf %t : tensor<16x256xf16> to tensor<16x256xf32>
  %sum = tile.reduce sum %xf, axis = 1 : tensor<16x256xf32> -> tensor<16xf32>
  %nv = tile.splat %N_f : f32 -> tensor<16xf32>
  %mean = arith.divf %sum, %nv : tensor<16xf32>
  %mean_e = tile.expand_dims %mean, axis = 1 : tensor<16xf32> -> tensor<16x1xf32>
  %mean_b = tile.broadcast %mean_e : tensor<16x1xf32> -> tensor<16x256xf32>
  %d = arith.subf %xf, %mean_b : tensor<16x256xf32>
  %iota = tile.iota : tensor<256xi32>
  %iota_r = tile.expand_dims %iota, axis = 0 : tensor<256xi32> -> tensor<1x256xi32>
  %cols = tile.broadcast %iota_r : tensor<1x256xi32> -> tensor<16x256xi32>
  %N_t = tile.splat %N_i : i32 -> tensor<16x256xi32>
  %inside = tile.cmpi slt, %cols, %N_t : tensor<16x256xi32> -> tensor<16x256xi1>
  %zeros = arith.constant dense<0.000000e+00> : tensor<16x256xf32>
  %dm = tile.select %inside, %d, %zeros : tensor<16x256xi1>, tensor<16x256xf32>
  %sq = arith.mulf %dm, %dm : tensor<16x256xf32>
  %ss = tile.reduce sum %sq, axis = 1 : tensor<16x256xf32> -> tensor<16xf32>
  %var = arith.divf %ss, %nv : tensor<16xf32>
  %ev = tile.splat %eps : f32 -> tensor<16xf32>
  %ve = arith.addf %var, %ev : tensor<16xf32>
  %rstd = math.rsqrt %ve : tensor<16xf32>
  %r_e = tile.expand_dims %rstd, axis = 1 : tensor<16xf32> -> tensor<16x1xf32>
  %r_b = tile.broadcast %r_e : tensor<16x1xf32> -> tensor<16x256xf32>
  %xn = arith.mulf %dm, %r_b : tensor<16x256xf32>
  %gv = tile.load %g[%c0] : !tile.desc<?xf32, box = [256]> -> tensor<256xf32>
  %g_e = tile.expand_dims %gv, axis = 0 : tensor<256xf32> -> tensor<1x256xf32>
  %g_b = tile.broadcast %g_e : tensor<1x256xf32> -> tensor<16x256xf32>
  %bv = tile.load %b[%c0] : !tile.desc<?xf32, box = [256]> -> tensor<256xf32>
  %b_e = tile.expand_dims %bv, axis = 0 : tensor<256xf32> -> tensor<1x256xf32>
  %b_b = tile.broadcast %b_e : tensor<1x256xf32> -> tensor<16x256xf32>
  %xg = arith.mulf %xn, %g_b : tensor<16x256xf32>
  %yf = arith.addf %xg, %b_b : tensor<16x256xf32>
  %y16 = arith.truncf %yf : tensor<16x256xf32> to tensor<16x256xbf16>
  tile.store %y16, %y[%m0, %c0] : tensor<16x256xbf16> -> !tile.desc<?x?xbf16, box = [16, 256]>
  func.return
}

// y[b, s, :] = f16(softmax(x[b, s, :])), the row tiles walked by a strided loop.
func.func @softmax_strided(%x: !tile.desc<?x?x?xf32, box = [1, 64, 128]> {tile.dims = ["B", "S", "N"]},
    %y: !tile.desc<?x?x?xf16, box = [1, 64, 128]> {tile.dims = ["B", "S", "N"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %np = tile.num_programs x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %B = tile.dim %x, 0 : !tile.desc<?x?x?xf32, box = [1, 64, 128]>
  %S = tile.dim %x, 1 : !tile.desc<?x?x?xf32, box = [1, 64, 128]>
  %N = tile.dim %x, 2 : !tile.desc<?x?x?xf32, box = [1, 64, 128]>
  %ts = arith.ceildivsi %S, %c64 : index
  %tiles = arith.muli %B, %ts : index
  %N_i = arith.index_cast %N : index to i32
  %N_t = tile.splat %N_i : i32 -> tensor<64x128xi32>
  %iota = tile.iota : tensor<128xi32>
  %iota_r = tile.expand_dims %iota, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cols = tile.broadcast %iota_r : tensor<1x128xi32> -> tensor<64x128xi32>
  %inside = tile.cmpi slt, %cols, %N_t : tensor<64x128xi32> -> tensor<64x128xi1>
  %ninf_s = arith.constant 0xFF800000 : f32
  %ninf = tile.splat %ninf_s : f32 -> tensor<64x128xf32>
  scf.for %t = %pid to %tiles step %np {
    %bi = arith.divsi %t, %ts : index
    %si = arith.remsi %t, %ts : index
    %s0 = arith.muli %si, %c64 : index
    %xt = tile.load %x[%bi, %s0, %c0] : !tile.desc<?x?x?xf32, box = [1, 64, 128]> -> tensor<64x128xf32>
    %xm = tile.select %inside, %xt, %ninf : tensor<64x128xi1>, tensor<64x128xf32>
    %mx = tile.reduce max %xm, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
    %mx_e = tile.expand_dims %mx, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %mx_b = tile.broadcast %mx_e : tensor<64x1xf32> -> tensor<64x128xf32>
    %sh = arith.subf %xm, %mx_b : tensor<64x128xf32>
    %e = math.exp %sh : tensor<64x128xf32>
    %sm = tile.reduce sum %e, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
    %sm_e = tile.expand_dims %sm, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
    %sm_b = tile.broadcast %sm_e : tensor<64x1xf32> -> tensor<64x128xf32>
    %p = arith.divf %e, %sm_b : tensor<64x128xf32>
    %p16 = arith.truncf %p : tensor<64x128xf32> to tensor<64x128xf16>
    tile.store %p16, %y[%bi, %s0, %c0] : tensor<64x128xf16> -> !tile.desc<?x?x?xf16, box = [1, 64, 128]>
  }
  func.return
}
