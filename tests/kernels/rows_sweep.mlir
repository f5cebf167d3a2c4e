// Row kernels with no tile.dot (the sweep of valid but unusual kernels).
//   @row_softmax:  y[m, :] = softmax(x[m, :N]), N <= 128, the columns past N masked
//   @row_sum_loop: o[m] = sum_n x[m, n] over any width, a loop of loads and no dot
// Grid: (ceil(M / 64),).

// Row softmax of a matrix whose rows fit one 128-wide tile (N <= 128), no dot:
// y[m, :] = softmax(x[m, :N]); columns past N are masked to -inf before the max.
func.func @row_softmax(%x: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [64, 128]>
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [64, 128]> -> tensor<64x128xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %neg_inf = tile.splat %ninf : f32 -> tensor<64x128xf32>
  %n_i32 = arith.index_cast %N : index to i32
  %n_t = tile.splat %n_i32 : i32 -> tensor<64x128xi32>
  %iota = tile.iota : tensor<128xi32>
  %cols = tile.expand_dims %iota, axis = 0 : tensor<128xi32> -> tensor<1x128xi32>
  %cols_b = tile.broadcast %cols : tensor<1x128xi32> -> tensor<64x128xi32>
  %inside = tile.cmpi slt, %cols_b, %n_t : tensor<64x128xi32> -> tensor<64x128xi1>
  %xm = tile.select %inside, %t, %neg_inf : tensor<64x128xi1>, tensor<64x128xf32>
  %mx = tile.reduce max %xm, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %mx_e = tile.expand_dims %mx, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %mx_b = tile.broadcast %mx_e : tensor<64x1xf32> -> tensor<64x128xf32>
  %sh = arith.subf %xm, %mx_b : tensor<64x128xf32>
  %e = math.exp %sh : tensor<64x128xf32>
  %sum = tile.reduce sum %e, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %sum_e = tile.expand_dims %sum, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %sum_b = tile.broadcast %sum_e : tensor<64x1xf32> -> tensor<64x128xf32>
  %out = arith.divf %e, %sum_b : tensor<64x128xf32>
  tile.store %out, %y[%m0, %c0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

// Row sums over any width: a loop of loads with no dot. o[m] = sum_n x[m, n] (bf16 in, f32 out).
func.func @row_sum_loop(%x: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %o: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %m0 = arith.muli %pid, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64xf32>
  %s = scf.for %n = %c0 to %N step %c64 iter_args(%acc = %zero) -> (tensor<64xf32>) {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tf = arith.extf %t : tensor<64x64xbf16> to tensor<64x64xf32>
    %r = tile.reduce sum %tf, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
    %a2 = arith.addf %acc, %r : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  tile.store %s, %o[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
