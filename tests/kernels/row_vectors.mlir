// Row vectors: one value per row of a tile, stored as a vector (found by the
// outside-user sweep: a reduction of a loaded tile was read into the layout of
// its result, and row vectors could not be stored from registers).
//
//   @row_sums:     o[m] = sum_k x[m, k], x loaded (no tile.dot)
//   @gemm_row_max: o[m] = bf16(max_n (A @ B^T)[m, n]), over the first 128 rows of B
func.func @row_sums(%x: !tile.desc<?x?xf32, box = [128, 64]>,
    %o: !tile.desc<?xf32, box = [128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid, %c128 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %s = tile.reduce sum %t, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
  tile.store %s, %o[%m0] : tensor<128xf32> -> !tile.desc<?xf32, box = [128]>
  func.return
}

func.func @gemm_row_max(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %o: !tile.desc<?xbf16, box = [128]>) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
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
  %m = tile.reduce max %acc, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
  %mb = arith.truncf %m : tensor<128xf32> to tensor<128xbf16>
  tile.store %mb, %o[%m0] : tensor<128xbf16> -> !tile.desc<?xbf16, box = [128]>
  func.return
}

// Vectors nothing ties to rows (a column tile: each thread its columns), stored
// from registers: a vector kernel (it had 'no layout constraints'), and a 1 x N
// row of a matrix (TMA staging takes matrix tiles only: it crashed).
//   @vector_exp:    o[i] = bf16(exp(x[i]))
//   @row_of_matrix: o[p, j] = exp(x[j]) for each program p
func.func @vector_exp(%x: !tile.desc<?xbf16, box = [128]>, %o: !tile.desc<?xbf16, box = [128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid, %c128 : index
  %t = tile.load %x[%m0] : !tile.desc<?xbf16, box = [128]> -> tensor<128xbf16>
  %f = arith.extf %t : tensor<128xbf16> to tensor<128xf32>
  %e = math.exp %f : tensor<128xf32>
  %b = arith.truncf %e : tensor<128xf32> to tensor<128xbf16>
  tile.store %b, %o[%m0] : tensor<128xbf16> -> !tile.desc<?xbf16, box = [128]>
  func.return
}

func.func @row_of_matrix(%x: !tile.desc<?xf32, box = [128]>, %o: !tile.desc<?x?xf32, box = [1, 128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %r = tile.expand_dims %t, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %e = math.exp %r : tensor<1x128xf32>
  tile.store %e, %o[%pid, %c0] : tensor<1x128xf32> -> !tile.desc<?x?xf32, box = [1, 128]>
  func.return
}

// Row sums kept as a column (an M x 1 box, 4 bytes a row: no TMA box could
// move it, but a tensor only stored needs none; found by the outside-user sweep)
func.func @row_sums_column(%x: !tile.desc<?x?xf32, box = [128, 64]>,
    %o: !tile.desc<?x?xf32, box = [128, 1]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid, %c128 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %s = tile.reduce sum %t, axis = 1 : tensor<128x64xf32> -> tensor<128xf32>
  %e = tile.expand_dims %s, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  tile.store %e, %o[%m0, %c0] : tensor<128x1xf32> -> !tile.desc<?x?xf32, box = [128, 1]>
  func.return
}
