// An scf.while in the consumer's epilogue lowers to a PTX loop: the before region at
// the head of every trip, its condition's values copied to the after region (and
// the results), the after region's yield back to the head. The accumulator it
// carries is complete first (no wgmma group in flight across the loop).
// RUN: tawa-opt %S/../../kernels/gemm_while.mlir -p 'tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=2}' -t ptx | filecheck %s

// CHECK-LABEL: .visible .entry gemm_while(
// CHECK:       L_consumer_{{[0-9]+}}:
// CHECK:         wgmma.mma_async
// CHECK:         wgmma.wait_group.sync.aligned 0;
// CHECK-NOT:     wgmma.mma_async
// CHECK:       [[HEAD:L_while_[0-9]+]]:
// CHECK-NEXT:    setp.lt.s32 [[MORE:%p[0-9]+]], [[I:%r[0-9]+]], %r{{[0-9]+}};
// CHECK:         mov.b32 [[J:%r[0-9]+]], [[I]];
// CHECK:         @![[MORE]] bra [[DONE:L_done_[0-9]+]];
// CHECK-NEXT:    add.s32 [[J1:%r[0-9]+]], [[J]], 1;
// CHECK:         mul.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, 0f3F000000;
// CHECK:         mov.b32 [[I]], [[J1]];
// CHECK:         bra [[HEAD]];
// CHECK-NEXT:  [[DONE]]:
