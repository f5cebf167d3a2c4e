// Float comparisons and float-to-integer casts on tiles (tile.cmpf, tile.fptosi,
// tile.fptoui; tests/test_cmpf.py):
//   @gemm_leaky:  C = leaky_relu(A B^T) = where(acc > 0, acc, 0.01 acc): tile.cmpf ogt
//                 against a zero constant and tile.select in a GEMM epilogue
//   @rows_guard:  y = 0 where x is NaN, else thr (> 0) where x >= thr, else trunc(8 x) / 8 where
//                 0 < x (a literal left side), else x / 2: a NaN guard, a clamp at a scalar
//                 threshold and a quantization through tile.fptosi / tile.sitofp;
//                 q = f32(fptosi(8 x)) and u = f32(fptoui(x)) (the unsigned result's bits
//                 read as signed): PTX cvt.rzi, towards zero, saturating, NaN to 0
//   @predicates:  z = sum_k 2^k [x pred_k y] over the fourteen predicates (oeq ... uno, in
//                 tile.cmpf's order), exact in f32: each bit one predicate's answer
//   @halves:      z = [x olt y] + 2 [x uno x] + 4 [0 olt x] + 8 [h oge g] + 16 [h une 0]: the
//                 compares of bf16 tiles x, y and f16 tiles h, g as loaded (no arith.extf),
//                 16-bit constants on either side
// Grids: (ceil(M / 128), ceil(N / 64)) for @gemm_leaky, (ceil(M / 64), ceil(N / 64)) for
// the others.

// C = f32(leaky_relu(A B^T)), slope 0.01, on 128 x 64 tiles.
func.func @gemm_leaky(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [128, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
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
  %pos = tile.cmpf ogt, %acc, %zero : tensor<128x64xf32> -> tensor<128x64xi1>
  %slope = arith.constant dense<1.000000e-02> : tensor<128x64xf32>
  %leak = arith.mulf %acc, %slope : tensor<128x64xf32>
  %out = tile.select %pos, %acc, %leak : tensor<128x64xi1>, tensor<128x64xf32>
  tile.store %out, %c[%m0, %n0] : tensor<128x64xf32> -> !tile.desc<?x?xf32, box = [128, 64]>
  func.return
}

// y = 0 where x is NaN, thr where x >= thr, trunc(8 x) / 8 where 0 < x, x / 2 elsewhere;
// q = f32(fptosi(8 x)); u = f32(fptoui(x)).
func.func @rows_guard(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %q: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %u: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %thr: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %xt = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %eights = arith.constant dense<8.000000e+00> : tensor<64x64xf32>
  %eighth = arith.constant dense<1.250000e-01> : tensor<64x64xf32>
  %halves = arith.constant dense<5.000000e-01> : tensor<64x64xf32>
  %thr_t = tile.splat %thr : f32 -> tensor<64x64xf32>
  %nan = tile.cmpf uno, %xt, %xt : tensor<64x64xf32> -> tensor<64x64xi1>
  %clean = tile.select %nan, %zeros, %xt : tensor<64x64xi1>, tensor<64x64xf32>
  %over = tile.cmpf oge, %clean, %thr_t : tensor<64x64xf32> -> tensor<64x64xi1>
  %positive = tile.cmpf olt, %zeros, %clean : tensor<64x64xf32> -> tensor<64x64xi1>
  %x8 = arith.mulf %clean, %eights : tensor<64x64xf32>
  %x8_i = tile.fptosi %x8 : tensor<64x64xf32> -> tensor<64x64xi32>
  %x8_f = tile.sitofp %x8_i : tensor<64x64xi32> -> tensor<64x64xf32>
  %quant = arith.mulf %x8_f, %eighth : tensor<64x64xf32>
  %half = arith.mulf %clean, %halves : tensor<64x64xf32>
  %low = tile.select %positive, %quant, %half : tensor<64x64xi1>, tensor<64x64xf32>
  %yt = tile.select %over, %thr_t, %low : tensor<64x64xi1>, tensor<64x64xf32>
  tile.store %yt, %y[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  %raw8 = arith.mulf %xt, %eights : tensor<64x64xf32>
  %qi = tile.fptosi %raw8 : tensor<64x64xf32> -> tensor<64x64xi32>
  %qt = tile.sitofp %qi : tensor<64x64xi32> -> tensor<64x64xf32>
  tile.store %qt, %q[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  %ui = tile.fptoui %xt : tensor<64x64xf32> -> tensor<64x64xi32>
  %ut = tile.sitofp %ui : tensor<64x64xi32> -> tensor<64x64xf32>
  tile.store %ut, %u[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// z = sum_k 2^k [x pred_k y], pred_k the k-th of oeq, ogt, oge, olt, ole, one, ord, ueq,
// ugt, uge, ult, ule, une, uno.
func.func @predicates(%x: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]},
    %z: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %xt = tile.load %x[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %yt = tile.load %y[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %p0 = tile.cmpf oeq, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w0 = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
  %b0 = tile.select %p0, %w0, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s0 = arith.addf %zeros, %b0 : tensor<64x64xf32>
  %p1 = tile.cmpf ogt, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w1 = arith.constant dense<2.000000e+00> : tensor<64x64xf32>
  %b1 = tile.select %p1, %w1, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s1 = arith.addf %s0, %b1 : tensor<64x64xf32>
  %p2 = tile.cmpf oge, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w2 = arith.constant dense<4.000000e+00> : tensor<64x64xf32>
  %b2 = tile.select %p2, %w2, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s2 = arith.addf %s1, %b2 : tensor<64x64xf32>
  %p3 = tile.cmpf olt, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w3 = arith.constant dense<8.000000e+00> : tensor<64x64xf32>
  %b3 = tile.select %p3, %w3, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s3 = arith.addf %s2, %b3 : tensor<64x64xf32>
  %p4 = tile.cmpf ole, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w4 = arith.constant dense<1.600000e+01> : tensor<64x64xf32>
  %b4 = tile.select %p4, %w4, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s4 = arith.addf %s3, %b4 : tensor<64x64xf32>
  %p5 = tile.cmpf one, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w5 = arith.constant dense<3.200000e+01> : tensor<64x64xf32>
  %b5 = tile.select %p5, %w5, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s5 = arith.addf %s4, %b5 : tensor<64x64xf32>
  %p6 = tile.cmpf ord, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w6 = arith.constant dense<6.400000e+01> : tensor<64x64xf32>
  %b6 = tile.select %p6, %w6, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s6 = arith.addf %s5, %b6 : tensor<64x64xf32>
  %p7 = tile.cmpf ueq, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w7 = arith.constant dense<1.280000e+02> : tensor<64x64xf32>
  %b7 = tile.select %p7, %w7, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s7 = arith.addf %s6, %b7 : tensor<64x64xf32>
  %p8 = tile.cmpf ugt, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w8 = arith.constant dense<2.560000e+02> : tensor<64x64xf32>
  %b8 = tile.select %p8, %w8, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s8 = arith.addf %s7, %b8 : tensor<64x64xf32>
  %p9 = tile.cmpf uge, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w9 = arith.constant dense<5.120000e+02> : tensor<64x64xf32>
  %b9 = tile.select %p9, %w9, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s9 = arith.addf %s8, %b9 : tensor<64x64xf32>
  %p10 = tile.cmpf ult, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w10 = arith.constant dense<1.024000e+03> : tensor<64x64xf32>
  %b10 = tile.select %p10, %w10, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s10 = arith.addf %s9, %b10 : tensor<64x64xf32>
  %p11 = tile.cmpf ule, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w11 = arith.constant dense<2.048000e+03> : tensor<64x64xf32>
  %b11 = tile.select %p11, %w11, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s11 = arith.addf %s10, %b11 : tensor<64x64xf32>
  %p12 = tile.cmpf une, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w12 = arith.constant dense<4.096000e+03> : tensor<64x64xf32>
  %b12 = tile.select %p12, %w12, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s12 = arith.addf %s11, %b12 : tensor<64x64xf32>
  %p13 = tile.cmpf uno, %xt, %yt : tensor<64x64xf32> -> tensor<64x64xi1>
  %w13 = arith.constant dense<8.192000e+03> : tensor<64x64xf32>
  %b13 = tile.select %p13, %w13, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s13 = arith.addf %s12, %b13 : tensor<64x64xf32>
  tile.store %s13, %z[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// z = [x olt y] + 2 [x uno x] + 4 [0 olt x] + 8 [h oge g] + 16 [h une 0], x and y bf16,
// h and g f16.
func.func @halves(%x: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %h: !tile.desc<?x?xf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %g: !tile.desc<?x?xf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %z: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %xt = tile.load %x[%m0, %n0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %yt = tile.load %y[%m0, %n0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %ht = tile.load %h[%m0, %n0] : !tile.desc<?x?xf16, box = [64, 64]> -> tensor<64x64xf16>
  %gt = tile.load %g[%m0, %n0] : !tile.desc<?x?xf16, box = [64, 64]> -> tensor<64x64xf16>
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %zero_b = arith.constant dense<0.000000e+00> : tensor<64x64xbf16>
  %zero_h = arith.constant dense<0.000000e+00> : tensor<64x64xf16>
  %p0 = tile.cmpf olt, %xt, %yt : tensor<64x64xbf16> -> tensor<64x64xi1>
  %w0 = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
  %s0 = tile.select %p0, %w0, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %p1 = tile.cmpf uno, %xt, %xt : tensor<64x64xbf16> -> tensor<64x64xi1>
  %w1 = arith.constant dense<2.000000e+00> : tensor<64x64xf32>
  %b1 = tile.select %p1, %w1, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s1 = arith.addf %s0, %b1 : tensor<64x64xf32>
  %p2 = tile.cmpf olt, %zero_b, %xt : tensor<64x64xbf16> -> tensor<64x64xi1>
  %w2 = arith.constant dense<4.000000e+00> : tensor<64x64xf32>
  %b2 = tile.select %p2, %w2, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s2 = arith.addf %s1, %b2 : tensor<64x64xf32>
  %p3 = tile.cmpf oge, %ht, %gt : tensor<64x64xf16> -> tensor<64x64xi1>
  %w3 = arith.constant dense<8.000000e+00> : tensor<64x64xf32>
  %b3 = tile.select %p3, %w3, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s3 = arith.addf %s2, %b3 : tensor<64x64xf32>
  %p4 = tile.cmpf une, %ht, %zero_h : tensor<64x64xf16> -> tensor<64x64xi1>
  %w4 = arith.constant dense<1.600000e+01> : tensor<64x64xf32>
  %b4 = tile.select %p4, %w4, %zeros : tensor<64x64xi1>, tensor<64x64xf32>
  %s4 = arith.addf %s3, %b4 : tensor<64x64xf32>
  tile.store %s4, %z[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
