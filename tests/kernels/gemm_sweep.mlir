// An outside user's GEMM-like kernels, written for the sweep of valid but unusual
// kernels (tests/test_sweep_kernels.py runs each in the interpreter against float64,
// and lowered, in the thread simulator; tests/test_dispatch.py plans some).
//   @gemm_swiglu:           C = bf16(silu(A Wg^T) * (A Wu^T)), two B operands, two accumulators
//   @gemm_rowscale_colbias: C = f32(s[m] (A B^T) + bias[n]), a column-vector scale, a row-vector bias
//   @gemm_nn_f16out:        C = f16(A B + R), bf16 inputs, B stored K x N, an f32 residual
//   @bgemm_stride:          C[z] = bf16(A[z stride :] B[z]^T), batch z on the grid, A folded
//   @gemm_ktiles:           C = A[:, 64 t0 : 64 t1] B[:, 64 t0 : 64 t1]^T, a loop over K tiles
//   @gemm_kstep:            the K loop from tile k0 in steps of `step` tiles (scalars)
//   @gemm_accum:            C = bf16(A B^T + beta C0), the accumulator starts from a loaded tile
//   @gemm_scaled_a:         C = bf16(A s) B^T in f32, A scaled in registers before the dot
//   @gemm_two_outputs:      C = bf16(A B^T) and its f32 row sums, two outputs
//   @gemm_64x64:            C = bf16(A B^T) on 64 x 64 tiles (no rate in the wave model)
// Grids: (ceil(M / BM), ceil(N / BN)) (bgemm_stride: z = batches; gemm_two_outputs: x only).

// C = bf16(silu(A @ Wg^T) * (A @ Wu^T)): two B operands, two accumulators in one loop.
func.func @gemm_swiglu(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %wg: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %wu: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
  %g, %u = scf.for %k = %c0 to %K step %c64 iter_args(%ga = %zero, %ua = %zero) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tg = tile.load %wg[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tu = tile.load %wu[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tgt = tile.trans %tg : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %tut = tile.trans %tu : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %g2 = tile.dot %ta, %tgt, %ga : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %u2 = tile.dot %ta, %tut, %ua : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %g2, %u2 : tensor<64x64xf32>, tensor<64x64xf32>
  }
  %neg = arith.negf %g : tensor<64x64xf32>
  %e = math.exp %neg : tensor<64x64xf32>
  %d = arith.addf %e, %one : tensor<64x64xf32>
  %s = arith.divf %g, %d : tensor<64x64xf32>
  %h = arith.mulf %s, %u : tensor<64x64xf32>
  %out = arith.truncf %h : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}

// C = f32(s[m] * (A @ B^T) + bias[n]): a column-vector scale, a row-vector bias; f32 output.
func.func @gemm_rowscale_colbias(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %s: !tile.desc<?xf32, box = [128]> {tile.dims = ["M"]},
    %bias: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
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
  %s_t = tile.load %s[%m0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %s_col = tile.expand_dims %s_t, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %s_b = tile.broadcast %s_col : tensor<128x1xf32> -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %s_b : tensor<128x128xf32>
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %bias_row = tile.expand_dims %bias_t, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x128xf32> -> tensor<128x128xf32>
  %x = arith.addf %scaled, %bias_b : tensor<128x128xf32>
  tile.store %x, %c[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}

// C = f16(A @ B + R): bf16 inputs, B stored K x N, f32 residual, f16 output; 64-row tiles.
func.func @gemm_nn_f16out(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["K", "N"]},
    %r: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]},
    %c: !tile.desc<?x?xf16, box = [64, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%k, %n0] : !tile.desc<?x?xbf16, box = [64, 128]> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tb, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %next : tensor<64x128xf32>
  }
  %rt = tile.load %r[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 128]> -> tensor<64x128xf32>
  %sum = arith.addf %acc, %rt : tensor<64x128xf32>
  %out = arith.truncf %sum : tensor<64x128xf32> to tensor<64x128xf16>
  tile.store %out, %c[%m0, %n0] : tensor<64x128xf16> -> !tile.desc<?x?xf16, box = [64, 128]>
  func.return
}

// Batched GEMM over a folded A: batch b's rows of A start at b * stride (a scalar); batch on grid z.
func.func @bgemm_stride(%a: !tile.desc<?x?xbf16, box = [64, 64]>,
    %b: !tile.desc<?x?x?xbf16, box = [1, 64, 64]>,
    %c: !tile.desc<?x?x?xbf16, box = [1, 64, 64]>, %stride: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %bz = tile.program_id z
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %base = arith.muli %bz, %stride : index
  %row = arith.addi %base, %m0 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x64xf32>) {
    %ta = tile.load %a[%row, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%bz, %n0, %k] : !tile.desc<?x?x?xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %out, %c[%bz, %m0, %n0] : tensor<64x64xbf16> -> !tile.desc<?x?x?xbf16, box = [1, 64, 64]>
  func.return
}

// C = A[:, 64 t0 : 64 t1] @ B[:, 64 t0 : 64 t1]^T: the K loop counts tiles from t0 to t1 (scalars).
func.func @gemm_ktiles(%a: !tile.desc<?x?xbf16, box = [64, 64]>,
    %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %c: !tile.desc<?x?xf32, box = [64, 64]>, %t0: index, %t1: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %acc = scf.for %t = %t0 to %t1 step %c1 iter_args(%acc_k = %zero) -> (tensor<64x64xf32>) {
    %k = arith.muli %t, %c64 : index
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// The K loop starts at a scalar tile offset and steps by a scalar tile count:
// C = sum over k = 64 k0, 64 (k0 + step), ... < K of A[:, k:k+64] @ B[:, k:k+64]^T.
func.func @gemm_kstep(%a: !tile.desc<?x?xbf16, box = [64, 64]>,
    %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %c: !tile.desc<?x?xf32, box = [64, 64]>, %k0: index, %step: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c1 = arith.constant 1 : index
  %st_t = arith.maxsi %step, %c1 : index
  %st = arith.muli %st_t, %c64 : index
  %kb = arith.muli %k0, %c64 : index
  %acc = scf.for %k = %kb to %K step %st iter_args(%acc_k = %zero) -> (tensor<64x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// C = bf16(A @ B^T + beta * C0): the accumulator starts from a loaded tile.
func.func @gemm_accum(%a: !tile.desc<?x?xbf16, box = [64, 64]>,
    %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %c0t: !tile.desc<?x?xf32, box = [64, 64]>,
    %c: !tile.desc<?x?xbf16, box = [64, 64]>, %beta: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %init = tile.load %c0t[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %beta_t = tile.splat %beta : f32 -> tensor<64x64xf32>
  %start = arith.mulf %init, %beta_t : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %start) -> (tensor<64x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}

// C = bf16(A * s) @ B^T (f32): A scaled in registers before the dot (A from registers).
func.func @gemm_scaled_a(%a: !tile.desc<?x?xbf16, box = [64, 64]>,
    %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %c: !tile.desc<?x?xf32, box = [64, 64]>, %s: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %s_t = tile.splat %s : f32 -> tensor<64x64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %taf = arith.extf %ta : tensor<64x64xbf16> to tensor<64x64xf32>
    %tas = arith.mulf %taf, %s_t : tensor<64x64xf32>
    %tab = arith.truncf %tas : tensor<64x64xf32> to tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %tab, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// Two outputs: C = bf16(A @ B^T) and the f32 row sums of the product, rs[m] = sum_n (A @ B^T)[m, n]
// over this program's 128 columns (one column block: N <= 128).
func.func @gemm_two_outputs(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["M", "N"]},
    %rs: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %next : tensor<64x128xf32>
  }
  %out = arith.truncf %acc : tensor<64x128xf32> to tensor<64x128xbf16>
  tile.store %out, %c[%m0, %c0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  %sum = tile.reduce sum %acc, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  tile.store %sum, %rs[%m0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}

// C = bf16(A @ B^T) on 64 x 64 tiles (a tile shape the wave model has no rate for).
func.func @gemm_64x64(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}
