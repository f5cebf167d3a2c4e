// GEMM-like kernels an outside user writes (the third sweep of valid but unusual
// kernels, tests/test_sweep_kernels.py):
//   @gemm_acc_init:   D = C + A B^T, the K loop's accumulator starting from the loaded C
//                     tile itself (was refused: "tile.store of %acc, a loaded tile carried
//                     through a loop"; the loaded tile is now read into registers first)
//   @bgemm_shared_b:  C[z] = bf16(A[z] B^T), one 2-D B for every batch (stride 0), z on the grid
//   @gemm_k128:       C = f32(A B^T) in K steps of 128 (two 128-byte swizzle chunks a row)
//   @gemm_k32_nn:     C = bf16(A B) in K steps of 32 (64-byte rows), B stored K x N
//   @gemm_192x96:     C = bf16(A B^T) on 192 x 96 tiles (three consumer warpgroups)
//   @mlp_fused:       y = bf16(relu(x W1^T) W2), F walked in 64-wide blocks: two dots a step
//   @mlp_seq:         y = bf16(relu(A W1^T) W2): a K loop, then a second dot after it
//   @gemm_math:       C = log(|x| + 1) + sqrt(|x| + 1) - exp2(-|x|) + floor(4 bias[n])
//   @gemm_two_dtypes: C16 = f16(A B^T) and C32 = s A B^T: two outputs of different dtypes
//   @power_iter:      x_{i+1} = bf16(x_i W^T), n steps from a loaded x_0: a loaded tile
//                     carried by a loop as the dot's A operand in registers (was refused
//                     as @gemm_acc_init was)
// Grids: (ceil(M / BM), ceil(N / BN)) (@bgemm_shared_b: z = batches; @mlp_fused and
// @power_iter: x only).

// D = C + A B^T with the K loop's accumulator starting from the loaded C tile itself
// (a loaded tile carried by the loop and updated by wgmma in registers).
func.func @gemm_acc_init(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]},
    %d: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
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
  tile.store %acc, %d[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}

// A batched GEMM whose B is shared by every batch (a 2-D B, stride 0 over the batch):
// C[z] = bf16(A[z] B^T), batch on grid axis z.
func.func @bgemm_shared_b(%a: !tile.desc<?x?x?xbf16, box = [1, 128, 64]> {tile.dims = ["Z", "M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?x?xbf16, box = [1, 128, 128]> {tile.dims = ["Z", "M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %z = tile.program_id z
  %K = tile.dim %a, 2 : !tile.desc<?x?x?xbf16, box = [1, 128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%z, %m0, %k] : !tile.desc<?x?x?xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%z, %m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?x?xbf16, box = [1, 128, 128]>
  func.return
}

// K steps of 128: C = f32(A B^T) with 128-deep A and B tiles (two 128-byte swizzle chunks a row).
func.func @gemm_k128(%a: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c128 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 128]> -> tensor<128x128xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 128]> -> tensor<128x128xbf16>
    %tbt = tile.trans %tb : tensor<128x128xbf16> -> tensor<128x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}

// K steps of 32 (64-byte rows), B stored K x N: C = bf16(A B).
func.func @gemm_k32_nn(%a: !tile.desc<?x?xbf16, box = [128, 32]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [32, 128]> {tile.dims = ["K", "N"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 32]>
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c32 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 32]> -> tensor<128x32xbf16>
    %tb = tile.load %b[%k, %n0] : !tile.desc<?x?xbf16, box = [32, 128]> -> tensor<32x128xbf16>
    %next = tile.dot %ta, %tb, %acc_k : tensor<128x32xbf16>, tensor<32x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// Tiles that are not powers of two: 192 x 96 output tiles (three consumer warpgroups).
func.func @gemm_192x96(%a: !tile.desc<?x?xbf16, box = [192, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [96, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [192, 96]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [192, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c96 = arith.constant 96 : index
  %c192 = arith.constant 192 : index
  %m0 = arith.muli %pid_m, %c192 : index
  %n0 = arith.muli %pid_n, %c96 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<192x96xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<192x96xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [192, 64]> -> tensor<192x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [96, 64]> -> tensor<96x64xbf16>
    %tbt = tile.trans %tb : tensor<96x64xbf16> -> tensor<64x96xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<192x64xbf16>, tensor<64x96xbf16> -> tensor<192x96xf32>
    scf.yield %next : tensor<192x96xf32>
  }
  %out = arith.truncf %acc : tensor<192x96xf32> to tensor<192x96xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<192x96xbf16> -> !tile.desc<?x?xbf16, box = [192, 96]>
  func.return
}

// Fused MLP on one row block: y = bf16(relu(x W1^T) W2), x: M x 128, W1: F x 128,
// W2: F x 128 (the down projection stored F x D), F walked in 64-wide blocks.
func.func @mlp_fused(%x: !tile.desc<?x128xbf16, box = [128, 128]> {tile.dims = ["M", "D"]},
    %w1: !tile.desc<?x128xbf16, box = [64, 128]> {tile.dims = ["F", "D"]},
    %w2: !tile.desc<?x128xbf16, box = [64, 128]> {tile.dims = ["F", "D"]},
    %y: !tile.desc<?x128xbf16, box = [128, 128]> {tile.dims = ["M", "D"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %F = tile.dim %w1, 0 : !tile.desc<?x128xbf16, box = [64, 128]>
  %m0 = arith.muli %pid, %c128 : index
  %xt = tile.load %x[%m0, %c0] : !tile.desc<?x128xbf16, box = [128, 128]> -> tensor<128x128xbf16>
  %zero_h = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %f = %c0 to %F step %c64 iter_args(%acc_f = %zero) -> (tensor<128x128xf32>) {
    %t1 = tile.load %w1[%f, %c0] : !tile.desc<?x128xbf16, box = [64, 128]> -> tensor<64x128xbf16>
    %t2 = tile.load %w2[%f, %c0] : !tile.desc<?x128xbf16, box = [64, 128]> -> tensor<64x128xbf16>
    %t1t = tile.trans %t1 : tensor<64x128xbf16> -> tensor<128x64xbf16>
    %h = tile.dot %xt, %t1t, %zero_h : tensor<128x128xbf16>, tensor<128x64xbf16> -> tensor<128x64xf32>
    %hr = arith.maximumf %h, %zero_h : tensor<128x64xf32>
    %hb = arith.truncf %hr : tensor<128x64xf32> to tensor<128x64xbf16>
    %next = tile.dot %hb, %t2, %acc_f : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %y[%m0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x128xbf16, box = [128, 128]>
  func.return
}

// Two GEMMs in sequence: h = bf16(relu(A W1^T)) over K (a 128-wide hidden block),
// then y = bf16(h W2) with W2 stored 128 x N, one dot after the loop.
func.func @mlp_seq(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %w1: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["H", "K"]},
    %w2: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["H", "N"]},
    %y: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %h = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %w1[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %hr = arith.maximumf %h, %zero : tensor<128x128xf32>
  %hb = arith.truncf %hr : tensor<128x128xf32> to tensor<128x128xbf16>
  %t2 = tile.load %w2[%c0, %n0] : !tile.desc<?x?xbf16, box = [128, 128]> -> tensor<128x128xbf16>
  %out = tile.dot %hb, %t2, %zero : tensor<128x128xbf16>, tensor<128x128xbf16> -> tensor<128x128xf32>
  %outb = arith.truncf %out : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %outb, %y[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// Math in the epilogue: C = log(|x| + 1) + sqrt(|x| + 1) - exp2(-|x|) + floor(4 bias[n]), x = A B^T.
func.func @gemm_math(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %c: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
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
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %next : tensor<64x128xf32>
  }
  %bt = tile.load %bias[%n0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %be = tile.expand_dims %bt, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bb = tile.broadcast %be : tensor<1x128xf32> -> tensor<64x128xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<64x128xf32>
  %four = arith.constant dense<4.000000e+00> : tensor<64x128xf32>
  %b4 = arith.mulf %bb, %four : tensor<64x128xf32>
  %fl = math.floor %b4 : tensor<64x128xf32>
  %ab = math.absf %acc : tensor<64x128xf32>
  %l1 = arith.addf %ab, %one : tensor<64x128xf32>
  %lg = math.log %l1 : tensor<64x128xf32>
  %sq = math.sqrt %l1 : tensor<64x128xf32>
  %nab = arith.negf %ab : tensor<64x128xf32>
  %e2 = math.exp2 %nab : tensor<64x128xf32>
  %s1 = arith.addf %lg, %sq : tensor<64x128xf32>
  %s2 = arith.subf %s1, %e2 : tensor<64x128xf32>
  %r = arith.addf %s2, %fl : tensor<64x128xf32>
  tile.store %r, %c[%m0, %n0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

// Two outputs of different dtypes from one accumulator: C16 = f16(A B^T), C32 = f32(A B^T) * s.
func.func @gemm_two_dtypes(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c16: !tile.desc<?x?xf16, box = [128, 128]> {tile.dims = ["M", "N"]},
    %c32: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]},
    %s: f32) attributes {tile.kernel} {
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
  %h = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  tile.store %h, %c16[%m0, %n0] : tensor<128x128xf16> -> !tile.desc<?x?xf16, box = [128, 128]>
  %st = tile.splat %s : f32 -> tensor<128x128xf32>
  %sc = arith.mulf %acc, %st : tensor<128x128xf32>
  tile.store %sc, %c32[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}

// x_{i+1} = bf16(x_i W^T) for n steps from a loaded bf16 row block x_0: the carried
// tile starts as a loaded tile and is the A operand of each step's dot (registers).
func.func @power_iter(%x: !tile.desc<?x64xbf16, box = [64, 64]> {tile.dims = ["M", "D"]},
    %w: !tile.desc<64x64xbf16, box = [64, 64]>,
    %y: !tile.desc<?x64xbf16, box = [64, 64]> {tile.dims = ["M", "D"]}, %n: index) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x64xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %wt = tile.load %w[%c0, %c0] : !tile.desc<64x64xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %wtt = tile.trans %wt : tensor<64x64xbf16> -> tensor<64x64xbf16>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %t) -> (tensor<64x64xbf16>) {
    %p = tile.dot %v, %wtt, %zero : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %pb = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xbf16>
    scf.yield %pb : tensor<64x64xbf16>
  }
  tile.store %r, %y[%m0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x64xbf16, box = [64, 64]>
  func.return
}
