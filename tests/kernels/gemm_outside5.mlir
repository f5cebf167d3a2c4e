// GEMM-like kernels an outside user writes (the fifth sweep of valid but unusual
// kernels, tests/test_sweep_kernels.py):
//   @gemm_epi_mix:    C = f16(alpha (A B^T) + bias[m] + R) on 64 x 256 tiles: a per-row
//                     bias (a column vector), a bf16 residual tile and a scalar
//   @gemm_batch_sum:  C = sum_b A[b] B[b]^T: a loop over the batches (their count from
//                     tile.dim) around the K loop, one accumulator carried through both
//   @gemm_64x32:      C = A B^T on 64 x 32 tiles (wgmma n = 32), f32 output
//   @gemm_256x64:     C = bf16(A B^T) on 256 x 64 tiles
//   @gemm_prefix:     P[j] = A[:, :64 (j + 1)] B[:, :64 (j + 1)]^T: the running product
//                     stored in the K loop after each step (a store in the loop of a dot)
//   @gemm_load_twice: C = A B^T + A B^T, the same A and B tiles loaded twice an iteration
//   @gemm_trans_res:  Ct = bf16(relu(A B^T)^T + Rt): the residual added after the
//                     transpose, loaded in the transposed layout (Rt is N x M)
// Grids: (ceil(M / BM), ceil(N / BN)).

// C = f16(alpha (A B^T) + bias[m] + R) on 64 x 256 tiles: a per-row bias (column vector),
// a bf16 residual tile and a scalar.
func.func @gemm_epi_mix(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [256, 64]> {tile.dims = ["N", "K"]},
    %bias: !tile.desc<?xf32, box = [64]> {tile.dims = ["M"]},
    %r: !tile.desc<?x?xbf16, box = [64, 256]> {tile.dims = ["M", "N"]},
    %c: !tile.desc<?x?xf16, box = [64, 256]> {tile.dims = ["M", "N"]},
    %alpha: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c256 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x256xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x256xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [256, 64]> -> tensor<256x64xbf16>
    %tbt = tile.trans %tb : tensor<256x64xbf16> -> tensor<64x256xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x256xbf16> -> tensor<64x256xf32>
    scf.yield %next : tensor<64x256xf32>
  }
  %al = tile.splat %alpha : f32 -> tensor<64x256xf32>
  %s = arith.mulf %acc, %al : tensor<64x256xf32>
  %bt = tile.load %bias[%m0] : !tile.desc<?xf32, box = [64]> -> tensor<64xf32>
  %bc = tile.expand_dims %bt, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %bb = tile.broadcast %bc : tensor<64x1xf32> -> tensor<64x256xf32>
  %sb = arith.addf %s, %bb : tensor<64x256xf32>
  %rt = tile.load %r[%m0, %n0] : !tile.desc<?x?xbf16, box = [64, 256]> -> tensor<64x256xbf16>
  %rf = arith.extf %rt : tensor<64x256xbf16> to tensor<64x256xf32>
  %y = arith.addf %sb, %rf : tensor<64x256xf32>
  %out = arith.truncf %y : tensor<64x256xf32> to tensor<64x256xf16>
  tile.store %out, %c[%m0, %n0] : tensor<64x256xf16> -> !tile.desc<?x?xf16, box = [64, 256]>
  func.return
}

// C = sum_b A[b] B[b]^T: an outer loop over the batches (their count from tile.dim) around
// the K loop, one accumulator carried through both loops.
func.func @gemm_batch_sum(%a: !tile.desc<?x?x?xbf16, box = [1, 128, 64]> {tile.dims = ["B", "M", "K"]},
    %b: !tile.desc<?x?x?xbf16, box = [1, 128, 64]> {tile.dims = ["B", "N", "K"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %B = tile.dim %a, 0 : !tile.desc<?x?x?xbf16, box = [1, 128, 64]>
  %K = tile.dim %a, 2 : !tile.desc<?x?x?xbf16, box = [1, 128, 64]>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %z = %c0 to %B step %c1 iter_args(%acc_z = %zero) -> (tensor<128x128xf32>) {
    %inner = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %acc_z) -> (tensor<128x128xf32>) {
      %ta = tile.load %a[%z, %m0, %k] : !tile.desc<?x?x?xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
      %tb = tile.load %b[%z, %n0, %k] : !tile.desc<?x?x?xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
      %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
      %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
      scf.yield %next : tensor<128x128xf32>
    }
    scf.yield %inner : tensor<128x128xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}

// C = A B^T on 64 x 32 tiles (wgmma n = 32), f32 output.
func.func @gemm_64x32(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [32, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [64, 32]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c32 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x32xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x32xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [32, 64]> -> tensor<32x64xbf16>
    %tbt = tile.trans %tb : tensor<32x64xbf16> -> tensor<64x32xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x32xbf16> -> tensor<64x32xf32>
    scf.yield %next : tensor<64x32xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<64x32xf32> -> !tile.desc<?x?xf32, box = [64, 32]>
  func.return
}

// C = A B^T on 256 x 64 tiles.
func.func @gemm_256x64(%a: !tile.desc<?x?xbf16, box = [256, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [256, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [256, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %m0 = arith.muli %pid_m, %c256 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<256x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<256x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [256, 64]> -> tensor<256x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<256x64xbf16>, tensor<64x64xbf16> -> tensor<256x64xf32>
    scf.yield %next : tensor<256x64xf32>
  }
  %out = arith.truncf %acc : tensor<256x64xf32> to tensor<256x64xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<256x64xbf16> -> !tile.desc<?x?xbf16, box = [256, 64]>
  func.return
}

// The running GEMM after each K step: P[j] = A[:, :64 (j + 1)] B[:, :64 (j + 1)]^T, a store
// in the K loop (the staging tile reused every iteration).
func.func @gemm_prefix(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %p: !tile.desc<?x?x?xf32, box = [1, 64, 64]> {tile.dims = ["J", "M", "N"]}) attributes {tile.kernel} {
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
    %j = arith.divui %k, %c64 : index
    tile.store %next, %p[%j, %m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?x?xf32, box = [1, 64, 64]>
    scf.yield %next : tensor<64x64xf32>
  }
  func.return
}

// C = bf16(A B^T + A B^T): the same A and B tiles loaded twice an iteration.
func.func @gemm_load_twice(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
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
    %ta2 = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb2 = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %tbt2 = tile.trans %tb2 : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %n1 = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %n2 = tile.dot %ta2, %tbt2, %n1 : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %n2 : tensor<64x64xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// Ct = bf16(relu(A B^T)^T + Rt): the residual added after the transpose, loaded in the
// transposed layout (Rt is N x M).
func.func @gemm_trans_res(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %rt: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["N", "M"]},
    %ct: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["N", "M"]}) attributes {tile.kernel} {
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
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %relu = arith.maximumf %acc, %zeros : tensor<128x64xf32>
  %relu_t = tile.trans %relu : tensor<128x64xf32> -> tensor<64x128xf32>
  %r = tile.load %rt[%n0, %m0] : !tile.desc<?x?xbf16, box = [64, 128]> -> tensor<64x128xbf16>
  %rf = arith.extf %r : tensor<64x128xbf16> to tensor<64x128xf32>
  %sum = arith.addf %relu_t, %rf : tensor<64x128xf32>
  %out = arith.truncf %sum : tensor<64x128xf32> to tensor<64x128xbf16>
  tile.store %out, %ct[%n0, %m0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}
