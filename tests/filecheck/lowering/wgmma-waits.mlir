// A loop that starts a fresh accumulator after another loop's wgmmas: its initial
// `mov`s write accumulator registers, which ptxas only allows with no wgmma group
// in flight (else it serializes every wgmma of the kernel, remark C7515). So the
// consumer waits for all groups right before the second loop, and only there: the
// first loop starts with nothing in flight.
// RUN: tawa-opt %S/../../kernels/gemm_two_loops.mlir -p 'tawa-hopper-pipeline{tuned=false num-stages=4 mma-depth=2 num-consumers=2}' | filecheck %s

// CHECK:       } consumer {
// CHECK-NOT:     nvgpu_async.wgmma_wait_group
// CHECK:         %acc1, %{{.*}} = scf.for
// CHECK:           nvgpu_async.wgmma_wait_group pending = 1
// CHECK:         scf.for %tail
// CHECK-NEXT:      nvgpu_async.wgmma_wait_group pending = 0
// CHECK:         nvgpu_async.wgmma_wait_group pending = 0
// CHECK-NEXT:    %acc2, %{{.*}} = scf.for
