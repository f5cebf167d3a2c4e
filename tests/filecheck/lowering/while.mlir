// An scf.while in both roles (a scalar loop bound) and in the consumer's
// epilogue (carrying the accumulator) lowers through tawa-hopper-pipeline: the
// loops stay structured at the nvgpu_async level, where the simulators run them.
// The thread-level back end has no form for scf.while yet: -t ptx refuses it at
// the loop's line (the old printer lowered it; issue 15's switch left it open).
// RUN: tawa-opt %S/../../kernels/gemm_while.mlir -p 'tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=2}' | filecheck %s --check-prefix=IR
// RUN: not tawa-opt %S/../../kernels/gemm_while.mlir -p 'tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=2}' -t ptx 2>&1 | filecheck %s

// IR-LABEL: func.func @gemm_while(
// IR:         nvgpu_async.role_dispatch
// IR:         scf.while
// IR:         nvgpu_async.wgmma
// IR:         nvgpu_async.wgmma_wait_group
// IR:         scf.while
// IR:         arith.mulf

// CHECK: tawa-opt: {{.*}}gemm_while.mlir:{{[0-9]+}}:3: error: scf.while has no thread-level form yet; write the loop as scf.for
// CHECK-NOT: Traceback
