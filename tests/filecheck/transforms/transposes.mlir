// canonicalize moves a transpose of a computed tile up to the loaded tiles
// (transforms/transposes.py): a GEMM storing its epilogue transposed becomes
// B A^T, the bias row a bias column, the splat zeros transposed; the loop
// carries the transposed accumulator. Where the transpose cannot reach only
// splats and shared tiles through values read transposed alone (by it, or by
// ops whose results are read transposed alone: `acc + relu(acc)`), it stays
// where it was written, and the store writes the register tile transposed
// (`store_global transposed`; it was refused there before: "a register tile
// cannot be transposed"). The sweep kernel @gemm_trans_out
// (tests/kernels/gemm_outside4.mlir) runs it at the thread level.
// RUN: tawa-opt %s -p canonicalize | filecheck %s
// RUN: tawa-opt %s -p 'tawa-hopper-pipeline{tuned=false}' --split-input-file | filecheck %s --check-prefix=KEPT

// CHECK-LABEL: func.func @trans_out
// CHECK:         %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
// CHECK:         %[[ACC:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[ZERO]]) -> (tensor<64x128xf32>)
// CHECK-NEXT:      %[[TA:.*]] = tile.load %a
// CHECK-NEXT:      %[[TB:.*]] = tile.load %b
// CHECK-NEXT:      %[[TAT:.*]] = tile.trans %[[TA]] : tensor<128x64xbf16> -> tensor<64x128xbf16>
// CHECK-NEXT:      %[[D:.*]] = tile.dot %[[TB]], %[[TAT]], %[[A]] : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
// CHECK-NEXT:      scf.yield %[[D]]
// CHECK:         tile.expand_dims %{{.*}}, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
// CHECK-NEXT:    tile.broadcast %{{.*}} : tensor<64x1xf32> -> tensor<64x128xf32>
// CHECK-NEXT:    arith.addf %[[ACC]], %{{.*}} : tensor<64x128xf32>
// CHECK-NOT:     tile.trans
// CHECK:         tile.store %{{.*}}, %ct[%n0, %m0] : tensor<64x128xbf16>

func.func @trans_out(%a: !tile.desc<?x?xbf16, box = [128, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %bias: !tile.desc<?xf32, box = [64]>, %ct: !tile.desc<?x?xbf16, box = [64, 128]>) attributes {tile.kernel} {
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
  %bias_t = tile.load %bias[%n0] : !tile.desc<?xf32, box = [64]> -> tensor<64xf32>
  %bias_row = tile.expand_dims %bias_t, axis = 0 : tensor<64xf32> -> tensor<1x64xf32>
  %bias_b = tile.broadcast %bias_row : tensor<1x64xf32> -> tensor<128x64xf32>
  %x = arith.addf %acc, %bias_b : tensor<128x64xf32>
  %out = arith.truncf %x : tensor<128x64xf32> to tensor<128x64xbf16>
  %out_t = tile.trans %out : tensor<128x64xbf16> -> tensor<64x128xbf16>
  tile.store %out_t, %ct[%n0, %m0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}

// -----

// An epilogue reading the accumulator twice (`acc + relu(acc)`) stored
// transposed: the transposes move up once every read of a value is one, so
// the loop carries the one transposed accumulator and both reads read it (it
// stopped at the accumulator's second read and was refused there).
// CHECK-LABEL: func.func @read_twice
// CHECK:         %[[ACC:.*]] = scf.for {{.*}} -> (tensor<64x128xf32>)
// CHECK:           tile.dot %tb, %{{.*}}, %{{.*}} : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
// CHECK-NOT:     tile.trans
// CHECK:         %[[RELU:.*]] = arith.maximumf %[[ACC]], %{{.*}} : tensor<64x128xf32>
// CHECK-NEXT:    arith.addf %[[ACC]], %[[RELU]] : tensor<64x128xf32>
// CHECK-NOT:     tile.trans
// CHECK:         tile.store %{{.*}}, %ct[%n0, %m0] : tensor<64x128xbf16>
func.func @read_twice(%a: !tile.desc<?x?xbf16, box = [128, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %ct: !tile.desc<?x?xbf16, box = [64, 128]>) attributes {tile.kernel} {
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
  %x = arith.addf %acc, %relu : tensor<128x64xf32>
  %out = arith.truncf %x : tensor<128x64xf32> to tensor<128x64xbf16>
  %out_t = tile.trans %out : tensor<128x64xbf16> -> tensor<64x128xbf16>
  tile.store %out_t, %ct[%n0, %m0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}

// -----

// The accumulator is stored as it is and transposed: moving the transpose up
// would compute the dot twice, so it stays: the store writes the accumulator
// transposed.
// CHECK-LABEL: func.func @both_orientations
// CHECK:         tile.trans %acc : tensor<64x64xf32> -> tensor<64x64xf32>
// KEPT-LABEL: func.func @both_orientations
// KEPT: nvgpu_async.store_global {{.*}} transposed
func.func @both_orientations(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %c: !tile.desc<?x?xf32, box = [64, 64]>, %ct: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
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
  tile.store %acc, %c[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  %acc_t = tile.trans %acc : tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %acc_t, %ct[%n0, %m0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// -----

// B stored K x N (16-bit): moved, the dot reads B's K x N tile transposed as
// its A (wgmma reads a 16-bit A MN-major) and A transposed as its B; the
// output goes out through TMA as any other (the swapped form of
// swap-operands' nn kernels; an 8-bit B stored K x N stays, a transposed A
// wgmma does not read).
// CHECK-LABEL: func.func @nn_trans
// CHECK:           %[[TBT:.*]] = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
// CHECK-NEXT:      %[[TAT:.*]] = tile.trans %ta : tensor<64x64xbf16> -> tensor<64x64xbf16>
// CHECK-NEXT:      tile.dot %[[TBT]], %[[TAT]], %acc_k
// KEPT-LABEL: func.func @nn_trans
// KEPT: nvgpu_async.wgmma %{{.*}} : !nvgpu_async.smem_view<64x64xbf16, transposed>, !nvgpu_async.smem_view<64x64xbf16, transposed>
// KEPT: nvgpu_async.tma_store %ct_staging
func.func @nn_trans(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %ct: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
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
    %tb = tile.load %b[%k, %n0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tb, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %acc_t = tile.trans %acc : tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %acc_t, %ct[%n0, %m0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// -----

// An epilogue reading the accumulator twice stored transposed, one of the
// reads (relu(acc)) also stored as it is: moving the transposes up would
// compute the dot twice, so they stay, and the refusal names the value.
// CHECK-LABEL: func.func @read_twice_kept
// CHECK:         tile.trans %out : tensor<64x64xf32> -> tensor<64x64xf32>
// KEPT-LABEL: func.func @read_twice_kept
// KEPT: nvgpu_async.store_global {{.*}} transposed
func.func @read_twice_kept(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
    %c: !tile.desc<?x?xf32, box = [64, 64]>, %ct: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
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
  %relu = arith.maximumf %acc, %zero : tensor<64x64xf32>
  %out = arith.addf %acc, %relu : tensor<64x64xf32>
  %out_t = tile.trans %out : tensor<64x64xf32> -> tensor<64x64xf32>
  tile.store %out_t, %ct[%n0, %m0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  tile.store %relu, %c[%m0, %n0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
