// GEMM-like kernels an outside user writes (the sixth sweep of valid but unusual
// kernels, tests/test_sweep_kernels.py): features that landed late, combined
//   @gemm_col_row:    C = bf16(A B^T), col[p, n] = sum over the rows of row tile p of
//                     (A B^T)[m, n] and row[q, m] = max over the columns of column tile q:
//                     a column and a row reduction of the same accumulator, three outputs
//   @fp8_res_clamp:   C = bf16(clamp(sa sb (A8 B8^T) + R, -lim, lim)): an FP8 GEMM with a
//                     bf16 residual tile and a clamp at a scalar written as two tile.cmpf +
//                     tile.select
//   @gemm_f16_i32:    C = f16(A B^T) and Q = fptosi(A B^T / 4) (i32): two outputs of
//                     different dtypes from one accumulator, one an integer matrix
//   @gemm_acc_colmax: C = A B^T + C (C read, then overwritten through TMA) and
//                     cmax[p, n] = max over row tile p of the new C: an accumulating GEMM
//                     with a column reduction
// Tiles past the edges read zeros (the row and column reductions take them in).
// Grids: (ceil(M / 128), ceil(N / 128)) (@gemm_f16_i32: (ceil(M / 128), ceil(N / 64))).

// C = bf16(A B^T); col[p, n] = sum over row tile p of (A B^T)[m, n]; row[q, m] = max over
// column tile q of (A B^T)[m, n].
func.func @gemm_col_row(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]},
    %col: !tile.desc<?x?xf32, box = [1, 128]> {tile.dims = ["MT", "N"]},
    %row: !tile.desc<?x?xf32, box = [1, 128]> {tile.dims = ["NT", "M"]}) attributes {tile.kernel} {
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
  %cs = tile.reduce sum %acc, axis = 0 : tensor<128x128xf32> -> tensor<128xf32>
  tile.store %cs, %col[%pid_m, %n0] : tensor<128xf32> -> !tile.desc<?x?xf32, box = [1, 128]>
  %rm = tile.reduce max %acc, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
  tile.store %rm, %row[%pid_n, %m0] : tensor<128xf32> -> !tile.desc<?x?xf32, box = [1, 128]>
  func.return
}

// C = bf16(min(max(sa sb (A8 B8^T) + R, -lim), lim)): an FP8 GEMM with a bf16 residual and a
// clamp at a scalar limit written with tile.cmpf + tile.select
func.func @fp8_res_clamp(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["N", "K"]},
    %r: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]},
    %sa: f32, %sb: f32, %lim: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c128 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tbt = tile.trans %tb : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %s = arith.mulf %sa, %sb : f32
  %st = tile.splat %s : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %st : tensor<128x128xf32>
  %rt = tile.load %r[%m0, %n0] : !tile.desc<?x?xbf16, box = [128, 128]> -> tensor<128x128xbf16>
  %rf = arith.extf %rt : tensor<128x128xbf16> to tensor<128x128xf32>
  %y = arith.addf %scaled, %rf : tensor<128x128xf32>
  %hi = tile.splat %lim : f32 -> tensor<128x128xf32>
  %nlim = arith.negf %lim : f32
  %lo = tile.splat %nlim : f32 -> tensor<128x128xf32>
  %over = tile.cmpf ogt, %y, %hi : tensor<128x128xf32> -> tensor<128x128xi1>
  %y1 = tile.select %over, %hi, %y : tensor<128x128xi1>, tensor<128x128xf32>
  %under = tile.cmpf olt, %y1, %lo : tensor<128x128xf32> -> tensor<128x128xi1>
  %y2 = tile.select %under, %lo, %y1 : tensor<128x128xi1>, tensor<128x128xf32>
  %out = arith.truncf %y2 : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// C = f16(A B^T) and Q = fptosi(A B^T / 4) (i32): two outputs of different dtypes, one an
// integer tile; 128 x 64 tiles
func.func @gemm_f16_i32(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf16, box = [128, 64]> {tile.dims = ["M", "N"]},
    %q: !tile.desc<?x?xi32, box = [128, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
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
  %out = arith.truncf %acc : tensor<128x64xf32> to tensor<128x64xf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x64xf16> -> !tile.desc<?x?xf16, box = [128, 64]>
  %quarter = arith.constant dense<2.500000e-01> : tensor<128x64xf32>
  %x4 = arith.mulf %acc, %quarter : tensor<128x64xf32>
  %qi = tile.fptosi %x4 : tensor<128x64xf32> -> tensor<128x64xi32>
  tile.store %qi, %q[%m0, %n0] : tensor<128x64xi32> -> !tile.desc<?x?xi32, box = [128, 64]>
  func.return
}

// C = A B^T + C (the output read and overwritten through TMA), and
// cmax[p, n] = max over row tile p of the updated C: an accumulate plus a column reduction
func.func @gemm_acc_colmax(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]},
    %cmax: !tile.desc<?x?xf32, box = [1, 128]> {tile.dims = ["MT", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %init = tile.load %c[%m0, %n0] : !tile.desc<?x?xf32, box = [128, 128]> -> tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %init) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  %cm = tile.reduce max %acc, axis = 0 : tensor<128x128xf32> -> tensor<128xf32>
  tile.store %cm, %cmax[%pid_m, %n0] : tensor<128xf32> -> !tile.desc<?x?xf32, box = [1, 128]>
  func.return
}
