// GEMM-like kernels an outside user writes (the ninth sweep of valid but unusual
// kernels, tests/test_sweep_kernels.py):
//   @gemm_e5m2_e4m3_f16: C = f16(s A B^T): A in e5m2, B in e4m3 (stored N x K), the
//                   output in f16, s a scalar
//   @gemm_clamp_two:  Y = f16(tanh(min(max(acc, lo), hi))) and Q = e4m3(acc s), acc =
//                   A B^T: one accumulator clamped by arith.maximumf / minimumf of
//                   scalar bounds (NaN propagates, as numpy's maximum does) and
//                   quantized with saturation
//   @gemm_rev_k:    C = f32(A B^T) + bias[n], the K tiles walked last to first
//                   (k = 64 (ceil(K / 64) - 1 - i)), on 64 x 128 tiles
// Grids: (ceil(M / 128), ceil(N / 128)) (@gemm_rev_k: (ceil(M / 64), ceil(N / 128))).

// C = f16(s A B^T), A e5m2, B e4m3.
func.func @gemm_e5m2_e4m3_f16(%a: !tile.desc<?x?xf8E5M2, box = [128, 128]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf16, box = [128, 128]> {tile.dims = ["M", "N"]},
    %s: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E5M2, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c128 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E5M2, box = [128, 128]> -> tensor<128x128xf8E5M2>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tbt = tile.trans %tb : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x128xf8E5M2>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %st = tile.splat %s : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %st : tensor<128x128xf32>
  %out = arith.truncf %scaled : tensor<128x128xf32> to tensor<128x128xf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xf16> -> !tile.desc<?x?xf16, box = [128, 128]>
  func.return
}

// Y = f16(tanh(clamp(A B^T, lo, hi))), Q = e4m3(s A B^T).
func.func @gemm_clamp_two(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %y: !tile.desc<?x?xf16, box = [128, 128]> {tile.dims = ["M", "N"]},
    %q: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["M", "N"]},
    %lo: f32, %hi: f32, %s: f32) attributes {tile.kernel} {
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
  %lot = tile.splat %lo : f32 -> tensor<128x128xf32>
  %hit = tile.splat %hi : f32 -> tensor<128x128xf32>
  %above = arith.maximumf %acc, %lot : tensor<128x128xf32>
  %clamped = arith.minimumf %above, %hit : tensor<128x128xf32>
  %th = math.tanh %clamped : tensor<128x128xf32>
  %y16 = arith.truncf %th : tensor<128x128xf32> to tensor<128x128xf16>
  tile.store %y16, %y[%m0, %n0] : tensor<128x128xf16> -> !tile.desc<?x?xf16, box = [128, 128]>
  %st = tile.splat %s : f32 -> tensor<128x128xf32>
  %qs = arith.mulf %acc, %st : tensor<128x128xf32>
  %q8 = arith.truncf %qs : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
  tile.store %q8, %q[%m0, %n0] : tensor<128x128xf8E4M3FN> -> !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  func.return
}

// C = f32(A B^T) + bias[n], K tiles from the last to the first.
func.func @gemm_rev_k(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %c: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %nt = arith.ceildivsi %K, %c64 : index
  %last = arith.subi %nt, %c1 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %i = %c0 to %nt step %c1 iter_args(%acc_k = %zero) -> (tensor<64x128xf32>) {
    %t = arith.subi %last, %i : index
    %k = arith.muli %t, %c64 : index
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %next : tensor<64x128xf32>
  }
  %bv = tile.load %bias[%n0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %be = tile.expand_dims %bv, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bb = tile.broadcast %be : tensor<1x128xf32> -> tensor<64x128xf32>
  %out = arith.addf %acc, %bb : tensor<64x128xf32>
  tile.store %out, %c[%m0, %n0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}
