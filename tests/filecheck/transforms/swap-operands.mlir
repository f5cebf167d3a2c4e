// swap-operands: a GEMM's stored tile v becomes trans_pinned(trans(v)), and the
// inner transpose moves up to the loaded tiles, so the dot reads the weight
// tile (N side) as A and A's rows transposed as B: C^T = B A^T. The pinned
// transpose stays in front of the store (canonicalize leaves it), and the
// lowering stores the register tile transposed (tests/test_swap_operands.py
// lowers and runs the kernels).
// RUN: tawa-opt %examples/gemm.mlir -p swap-operands | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p swap-operands,canonicalize,swap-operands | filecheck %s
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p swap-operands | filecheck %s --check-prefix=BIAS
// RUN: not tawa-opt %examples/attention.mlir -p swap-operands 2>&1 | filecheck %s --check-prefix=ATTENTION

// nt: B's N x K tile is wgmma's A, A's M x K tile transposed its B.
// CHECK-LABEL: func.func @gemm_nt
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
// CHECK:         scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]])
// CHECK-NEXT:      %ta = tile.load %a
// CHECK-NEXT:      %tb = tile.load %b
// CHECK-NEXT:      %[[TAT:.*]] = tile.trans %ta : tensor<128x64xbf16> -> tensor<64x128xbf16>
// CHECK-NEXT:      %[[D:.*]] = tile.dot %tb, %[[TAT]], %[[ACC]]
// CHECK:         %[[OUT:.*]] = arith.truncf
// CHECK-NEXT:    %[[T:.*]] = tile.trans %[[OUT]] pinned
// CHECK-NEXT:    tile.store %[[T]], %c[%m0, %n0]
// nn (16-bit): B's K x N tile read transposed is wgmma's A (MN-major).
// CHECK-LABEL: func.func @gemm_nn
// CHECK:           %[[TBT:.*]] = tile.trans %tb : tensor<64x128xbf16> -> tensor<128x64xbf16>
// CHECK-NEXT:      %[[TAT:.*]] = tile.trans %ta : tensor<128x64xbf16> -> tensor<64x128xbf16>
// CHECK-NEXT:      tile.dot %[[TBT]], %[[TAT]]
// CHECK:         tile.trans %{{.*}} pinned

// ATTENTION: error: tile.store: swap-operands cannot compute this store's GEMM as C^T = B A^T: %{{.*}} is a tile.dot of other operands than A as loaded and B loaded (N x K and transposed, or 16-bit K x N), which swapped would not read as wgmma takes them

// The bias row (one value per column of C) becomes a column of C^T: expand_dims
// at axis 1, broadcast along the rows of A; the splat zeros transposed.
// BIAS-LABEL: func.func @gemm_bias
// BIAS:         tile.dot %tb, %{{.*}}, %{{.*}} : tensor<128x64xbf16>, tensor<64x16xbf16> -> tensor<128x16xf32>
// BIAS:         %[[COL:.*]] = tile.expand_dims %bias_f, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
// BIAS-NEXT:    %[[B:.*]] = tile.broadcast %[[COL]] : tensor<128x1xf32> -> tensor<128x16xf32>
// BIAS-NEXT:    %[[SUM:.*]] = arith.addf %{{.*}}, %[[B]] : tensor<128x16xf32>
// BIAS:         tile.trans %{{.*}} pinned : tensor<128x16xbf16> -> tensor<16x128xbf16>
func.func @gemm_bias(%a: !tile.desc<?x?xbf16, box = [16, 64]>, %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %bias: !tile.desc<?xbf16, box = [128]>, %c: !tile.desc<?x?xbf16, box = [16, 128]>) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [16, 64]>
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c16 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<16x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<16x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [16, 64]> -> tensor<16x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<16x64xbf16>, tensor<64x128xbf16> -> tensor<16x128xf32>
    scf.yield %next : tensor<16x128xf32>
  }
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xbf16, box = [128]> -> tensor<128xbf16>
  %bias_f = arith.extf %bias_t : tensor<128xbf16> to tensor<128xf32>
  %bias_row = tile.expand_dims %bias_f, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x128xf32> -> tensor<16x128xf32>
  %sum = arith.addf %acc, %bias_b : tensor<16x128xf32>
  %relu = arith.maximumf %sum, %zero : tensor<16x128xf32>
  %out = arith.truncf %relu : tensor<16x128xf32> to tensor<16x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<16x128xbf16> -> !tile.desc<?x?xbf16, box = [16, 128]>
  func.return
}

// -----

// A tile loaded after the loop and added (a residual) would be read into
// registers transposed.
func.func @gemm_residual(%a: !tile.desc<?x?xbf16, box = [16, 64]>, %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %r: !tile.desc<?x?xf32, box = [16, 128]>, %c: !tile.desc<?x?xf32, box = [16, 128]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<16x128xf32>
  %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [16, 64]> -> tensor<16x64xbf16>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
  %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
  %d = tile.dot %ta, %tbt, %zero : tensor<16x64xbf16>, tensor<64x128xbf16> -> tensor<16x128xf32>
  %res = tile.load %r[%c0, %c0] : !tile.desc<?x?xf32, box = [16, 128]> -> tensor<16x128xf32>
  %sum = arith.addf %d, %res : tensor<16x128xf32>
  // expected-error@+1 {{swap-operands cannot compute this store's GEMM as C^T = B A^T: %res is a loaded tile computed on: moved, the transpose would read a transposed shared tile into registers}}
  tile.store %sum, %c[%c0, %c0] : tensor<16x128xf32> -> !tile.desc<?x?xf32, box = [16, 128]>
  func.return
}

// -----

// 8-bit B stored K x N: swapped, it would be an MN-major A, which wgmma does
// not read for 8-bit operands.
func.func @fp8_nn(%a: !tile.desc<?x?xf8E4M3FN, box = [16, 128]>, %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]>,
    %c: !tile.desc<?x?xf32, box = [16, 128]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<16x128xf32>
  %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xf8E4M3FN, box = [16, 128]> -> tensor<16x128xf8E4M3FN>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
  %d = tile.dot %ta, %tb, %zero : tensor<16x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<16x128xf32>
  // expected-error@+1 {{swap-operands cannot compute this store's GEMM as C^T = B A^T: %d is a tile.dot of other operands than A as loaded and B loaded (N x K and transposed, or 16-bit K x N), which swapped would not read as wgmma takes them}}
  tile.store %d, %c[%c0, %c0] : tensor<16x128xf32> -> !tile.desc<?x?xf32, box = [16, 128]>
  func.return
}

// -----

// No stored tile comes from a dot: nothing to swap.
// expected-error@+1 {{swap-operands: @copy stores no matrix tile computed by a tile.dot: there are no operands to swap}}
func.func @copy(%a: !tile.desc<?x?xf32, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  tile.store %t, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
