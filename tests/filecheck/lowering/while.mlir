// An scf.while in both roles (a scalar loop bound) and in the consumer's
// epilogue (carrying the accumulator) lowers through tawa-hopper-pipeline: the
// loops stay structured at the nvgpu_async level, where the simulators run them,
// and -t ptx lowers each to a head label, the condition, a branch out on its
// negation, the body and a jump back; the epilogue's loop halves the
// accumulator's 64 registers in place (the forwarded values, the after
// region's arguments and the results share the carried registers).
// RUN: tawa-opt %S/../../kernels/gemm_while.mlir -p 'tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=2}' | filecheck %s --check-prefix=IR
// RUN: tawa-opt %S/../../kernels/gemm_while.mlir -p 'tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=2}' -t ptx | filecheck %s

// IR-LABEL: func.func @gemm_while(
// IR:         nvgpu_async.role_dispatch
// IR:         scf.while
// IR:         nvgpu_async.wgmma
// IR:         nvgpu_async.wgmma_wait_group
// IR:         scf.while
// IR:         arith.mulf

// The producer's K bound steps by 64 while below K, then bounds its K loop.
// CHECK-LABEL: .visible .entry gemm_while(
// CHECK:         mov.b32 [[E:%r[0-9]+]], 0;
// CHECK-NEXT:  [[HEAD:L_while_[0-9]+]]:
// CHECK-NEXT:    setp.lt.s32 [[P:%p[0-9]+]], [[E]], [[K:%r[0-9]+]];
// CHECK-NEXT:    @![[P]] bra [[DONE:L_while_done_[0-9]+]];
// CHECK-NEXT:    add.s32 [[E]], [[E]], 64;
// CHECK-NEXT:    bra.uni [[HEAD]];
// CHECK-NEXT:  [[DONE]]:
// CHECK:         setp.ge.s32 %p{{[0-9]+}}, %r{{[0-9]+}}, [[E]];
// The consumer's K bound, then its epilogue: the accumulator copied into the
// loop's registers, halved there, and read after the loop from them.
// CHECK:       L_while_{{[0-9]+}}:
// CHECK:       L_while_done_{{[0-9]+}}:
// CHECK:         mov.f32 %f64, %f0;
// CHECK:         mov.f32 %f127, %f63;
// CHECK-NEXT:  [[EPI:L_while_[0-9]+]]:
// CHECK-NEXT:    setp.lt.s32 [[Q:%p[0-9]+]], [[I:%r[0-9]+]], %r{{[0-9]+}};
// CHECK-NEXT:    wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT:    @![[Q]] bra [[EPI_DONE:L_while_done_[0-9]+]];
// CHECK-NEXT:    add.s32 [[I]], [[I]], 1;
// CHECK-NEXT:    wgmma.wait_group.sync.aligned 0;
// CHECK-NEXT:    mul.f32 %f64, %f64, 0f3F000000;
// CHECK:         mul.f32 %f127, %f127, 0f3F000000;
// CHECK-NEXT:    bra.uni [[EPI]];
// CHECK-NEXT:  [[EPI_DONE]]:
// CHECK:         mul.f32 %f64, %f64, 0fBF800000;
// CHECK-NOT:     scf.while
// CHECK-NOT:     Traceback
