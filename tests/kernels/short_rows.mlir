// Register tiles of fewer than 64 rows: a row kernel over 16-, 32- or 48-row
// tiles, held padded to one 64-row accumulator block (the warps past the rows
// read the tile's own rows and store nothing). Each once crossed its tile or
// slot in shared memory (the layout assumed 64 rows).
//
//   @row_softmax32: y = bf16(softmax(x) along each row), m[i] = max_j x[i, j]
//   @rows16_scale:  y = bf16(x[i, j] * s[i])   (a row vector read into registers)
//   @rows48_iota:   y = x[i, j] + i mod 48     (row ids of a padded tile)
//   @row_exp_sums32: o[i] = sum_j exp(x[i, j]), 64 columns an iteration (a
//                    row vector carried by the loop)
func.func @row_softmax32(%x: !tile.desc<?x?xf32, box = [32, 64]>,
    %y: !tile.desc<?x?xbf16, box = [32, 64]>,
    %m: !tile.desc<?xf32, box = [32]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %m0 = arith.muli %pid, %c32 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [32, 64]> -> tensor<32x64xf32>
  %mx = tile.reduce max %t, axis = 1 : tensor<32x64xf32> -> tensor<32xf32>
  %mx_e = tile.expand_dims %mx, axis = 1 : tensor<32xf32> -> tensor<32x1xf32>
  %mx_b = tile.broadcast %mx_e : tensor<32x1xf32> -> tensor<32x64xf32>
  %d = arith.subf %t, %mx_b : tensor<32x64xf32>
  %e = math.exp %d : tensor<32x64xf32>
  %s = tile.reduce sum %e, axis = 1 : tensor<32x64xf32> -> tensor<32xf32>
  %s_e = tile.expand_dims %s, axis = 1 : tensor<32xf32> -> tensor<32x1xf32>
  %s_b = tile.broadcast %s_e : tensor<32x1xf32> -> tensor<32x64xf32>
  %p = arith.divf %e, %s_b : tensor<32x64xf32>
  %pb = arith.truncf %p : tensor<32x64xf32> to tensor<32x64xbf16>
  tile.store %pb, %y[%m0, %c0] : tensor<32x64xbf16> -> !tile.desc<?x?xbf16, box = [32, 64]>
  tile.store %mx, %m[%m0] : tensor<32xf32> -> !tile.desc<?xf32, box = [32]>
  func.return
}

func.func @rows16_scale(%x: !tile.desc<?x?xbf16, box = [16, 128]>,
    %s: !tile.desc<?xf32, box = [16]>,
    %y: !tile.desc<?x?xbf16, box = [16, 128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %m0 = arith.muli %pid, %c16 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xbf16, box = [16, 128]> -> tensor<16x128xbf16>
  %v = tile.load %s[%m0] : !tile.desc<?xf32, box = [16]> -> tensor<16xf32>
  %v_e = tile.expand_dims %v, axis = 1 : tensor<16xf32> -> tensor<16x1xf32>
  %v_b = tile.broadcast %v_e : tensor<16x1xf32> -> tensor<16x128xf32>
  %f = arith.extf %t : tensor<16x128xbf16> to tensor<16x128xf32>
  %r = arith.mulf %f, %v_b : tensor<16x128xf32>
  %rb = arith.truncf %r : tensor<16x128xf32> to tensor<16x128xbf16>
  tile.store %rb, %y[%m0, %c0] : tensor<16x128xbf16> -> !tile.desc<?x?xbf16, box = [16, 128]>
  func.return
}

func.func @rows48_iota(%x: !tile.desc<?x?xf32, box = [48, 32]>,
    %y: !tile.desc<?x?xf32, box = [48, 32]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c48 = arith.constant 48 : index
  %m0 = arith.muli %pid, %c48 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [48, 32]> -> tensor<48x32xf32>
  %i = tile.iota : tensor<48xi32>
  %f = tile.sitofp %i : tensor<48xi32> -> tensor<48xf32>
  %f_e = tile.expand_dims %f, axis = 1 : tensor<48xf32> -> tensor<48x1xf32>
  %f_b = tile.broadcast %f_e : tensor<48x1xf32> -> tensor<48x32xf32>
  %r = arith.addf %t, %f_b : tensor<48x32xf32>
  tile.store %r, %y[%m0, %c0] : tensor<48x32xf32> -> !tile.desc<?x?xf32, box = [48, 32]>
  func.return
}

func.func @row_exp_sums32(%x: !tile.desc<?x?xf32, box = [32, 64]>,
    %o: !tile.desc<?xf32, box = [32]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [32, 64]>
  %m0 = arith.muli %pid, %c32 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<32xf32>
  %s = scf.for %n = %c0 to %N step %c64 iter_args(%acc = %zero) -> (tensor<32xf32>) {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [32, 64]> -> tensor<32x64xf32>
    %e = math.exp %t : tensor<32x64xf32>
    %r = tile.reduce sum %e, axis = 1 : tensor<32x64xf32> -> tensor<32xf32>
    %next = arith.addf %acc, %r : tensor<32xf32>
    scf.yield %next : tensor<32xf32>
  }
  tile.store %s, %o[%m0] : tensor<32xf32> -> !tile.desc<?xf32, box = [32]>
  func.return
}

// The same kernels over tiles that end in half a 16-row warp slab (8, 24, 40,
// 56 rows): the last warp's lanes hold a row of the tile at g and padding at
// g + 8, read at a row of the tile of its own and masked row by row.

func.func @row_softmax8(%x: !tile.desc<?x?xf32, box = [8, 64]>,
    %y: !tile.desc<?x?xbf16, box = [8, 64]>,
    %m: !tile.desc<?xf32, box = [8]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %m0 = arith.muli %pid, %c8 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [8, 64]> -> tensor<8x64xf32>
  %mx = tile.reduce max %t, axis = 1 : tensor<8x64xf32> -> tensor<8xf32>
  %mx_e = tile.expand_dims %mx, axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
  %mx_b = tile.broadcast %mx_e : tensor<8x1xf32> -> tensor<8x64xf32>
  %d = arith.subf %t, %mx_b : tensor<8x64xf32>
  %e = math.exp %d : tensor<8x64xf32>
  %s = tile.reduce sum %e, axis = 1 : tensor<8x64xf32> -> tensor<8xf32>
  %s_e = tile.expand_dims %s, axis = 1 : tensor<8xf32> -> tensor<8x1xf32>
  %s_b = tile.broadcast %s_e : tensor<8x1xf32> -> tensor<8x64xf32>
  %p = arith.divf %e, %s_b : tensor<8x64xf32>
  %pb = arith.truncf %p : tensor<8x64xf32> to tensor<8x64xbf16>
  tile.store %pb, %y[%m0, %c0] : tensor<8x64xbf16> -> !tile.desc<?x?xbf16, box = [8, 64]>
  tile.store %mx, %m[%m0] : tensor<8xf32> -> !tile.desc<?xf32, box = [8]>
  func.return
}

func.func @rows24_scale(%x: !tile.desc<?x?xbf16, box = [24, 128]>,
    %s: !tile.desc<?xf32, box = [24]>,
    %y: !tile.desc<?x?xbf16, box = [24, 128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c24 = arith.constant 24 : index
  %m0 = arith.muli %pid, %c24 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xbf16, box = [24, 128]> -> tensor<24x128xbf16>
  %v = tile.load %s[%m0] : !tile.desc<?xf32, box = [24]> -> tensor<24xf32>
  %v_e = tile.expand_dims %v, axis = 1 : tensor<24xf32> -> tensor<24x1xf32>
  %v_b = tile.broadcast %v_e : tensor<24x1xf32> -> tensor<24x128xf32>
  %f = arith.extf %t : tensor<24x128xbf16> to tensor<24x128xf32>
  %r = arith.mulf %f, %v_b : tensor<24x128xf32>
  %rb = arith.truncf %r : tensor<24x128xf32> to tensor<24x128xbf16>
  tile.store %rb, %y[%m0, %c0] : tensor<24x128xbf16> -> !tile.desc<?x?xbf16, box = [24, 128]>
  func.return
}

func.func @rows40_iota(%x: !tile.desc<?x?xf32, box = [40, 32]>,
    %y: !tile.desc<?x?xf32, box = [40, 32]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c40 = arith.constant 40 : index
  %m0 = arith.muli %pid, %c40 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [40, 32]> -> tensor<40x32xf32>
  %i = tile.iota : tensor<40xi32>
  %f = tile.sitofp %i : tensor<40xi32> -> tensor<40xf32>
  %f_e = tile.expand_dims %f, axis = 1 : tensor<40xf32> -> tensor<40x1xf32>
  %f_b = tile.broadcast %f_e : tensor<40x1xf32> -> tensor<40x32xf32>
  %r = arith.addf %t, %f_b : tensor<40x32xf32>
  tile.store %r, %y[%m0, %c0] : tensor<40x32xf32> -> !tile.desc<?x?xf32, box = [40, 32]>
  func.return
}

func.func @row_exp_sums56(%x: !tile.desc<?x?xf32, box = [56, 64]>,
    %o: !tile.desc<?xf32, box = [56]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c56 = arith.constant 56 : index
  %c64 = arith.constant 64 : index
  %N = tile.dim %x, 1 : !tile.desc<?x?xf32, box = [56, 64]>
  %m0 = arith.muli %pid, %c56 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<56xf32>
  %s = scf.for %n = %c0 to %N step %c64 iter_args(%acc = %zero) -> (tensor<56xf32>) {
    %t = tile.load %x[%m0, %n] : !tile.desc<?x?xf32, box = [56, 64]> -> tensor<56x64xf32>
    %e = math.exp %t : tensor<56x64xf32>
    %r = tile.reduce sum %e, axis = 1 : tensor<56x64xf32> -> tensor<56xf32>
    %next = arith.addf %acc, %r : tensor<56xf32>
    scf.yield %next : tensor<56xf32>
  }
  tile.store %s, %o[%m0] : tensor<56xf32> -> !tile.desc<?xf32, box = [56]>
  func.return
}
