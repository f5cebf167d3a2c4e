// ping-pong: consumer warpgroups take turns issuing each loop iteration's wgmmas.
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative,pipeline{num-stages=3 mma-depth=1},convert-aref-to-nvgpu-async,ping-pong' | filecheck %s
// RUN: tawa-opt %examples/attention.mlir -p 'tawa-hopper-pipeline{tuned=false num-consumers=2 num-stages=2 mma-depth=1 two-stage=true ping-pong=true}' | filecheck %s --check-prefix=ATTN
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline,convert-aref-to-nvgpu-async,ping-pong' 2>&1 | filecheck %s --check-prefix=ONE
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative,pipeline,ping-pong' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative,pipeline,convert-aref-to-nvgpu-async,ping-pong,ping-pong' 2>&1 | filecheck %s --check-prefix=TWICE

// The turn order starts once per consumer region (after the register budget);
// in the K loop the turn covers the wgmma issue: from the fence to the commit.
// The producer never takes part.
// CHECK-LABEL: func.func @gemm_nt
// CHECK:         nvgpu_async.role_dispatch consumers = 2
// CHECK-NOT:     nvgpu_async.mma_turn
// CHECK:         } consumer {
// CHECK-NEXT:      nvgpu_async.setmaxnreg inc 240
// CHECK-NEXT:      nvgpu_async.mma_turn_init
// CHECK:           scf.for
// CHECK:             nvgpu_async.mbarrier_wait %ring0_full
// CHECK:             nvgpu_async.mma_turn_begin
// CHECK-NEXT:        nvgpu_async.wgmma_fence
// CHECK-NEXT:        nvgpu_async.wgmma
// CHECK-NEXT:        nvgpu_async.wgmma_commit_group
// CHECK-NEXT:        nvgpu_async.mma_turn_end
// CHECK-NEXT:        nvgpu_async.wgmma_wait_group pending = 0
// CHECK:             scf.yield
// CHECK-NOT:       nvgpu_async.mma_turn
// CHECK-LABEL: func.func @gemm_nn

// Attention after the two-stage rotation: one turn spans both dots of an
// iteration (S of the next block, then P V of this one, with O's rescale between),
// so the softmax runs outside it, under the other warpgroup's MMAs. The masked
// tail loop takes turns too; the peeled first and last dots do not.
// ATTN-LABEL: func.func @attention_d64
// ATTN:         nvgpu_async.mma_turn_init
// ATTN-NOT:     nvgpu_async.mma_turn
// ATTN:         scf.for
// ATTN:           nvgpu_async.mma_turn_begin
// ATTN-NEXT:      nvgpu_async.wgmma_fence
// ATTN-NEXT:      %s_1 = nvgpu_async.wgmma
// ATTN-NEXT:      nvgpu_async.wgmma_commit_group
// ATTN:           arith.mulf %acc_1
// ATTN:           nvgpu_async.wgmma_fence
// ATTN-NEXT:      %acc_new = nvgpu_async.wgmma
// ATTN-NEXT:      nvgpu_async.wgmma_commit_group
// ATTN-NEXT:      nvgpu_async.mma_turn_end
// ATTN:           math.exp2
// ATTN:           scf.yield
// ATTN:         scf.for
// ATTN:           nvgpu_async.mma_turn_begin
// ATTN:           nvgpu_async.mma_turn_end
// ATTN:           scf.yield

// ONE: tawa-opt: {{.*}}gemm.mlir:{{[0-9]+}}:1: error: nvgpu_async.role_dispatch: ping-pong: kernel @gemm_nt has 1 consumer warpgroup, which cannot take turns; run cooperative{num-consumers=2} (or 3) before convert-aref-to-nvgpu-async (tawa-hopper-pipeline: give num-consumers=2 with ping-pong=true)
// ORDER: tawa-opt: {{.*}}gemm.mlir:9:1: error: func.func: ping-pong takes nvgpu_async IR (made by convert-aref-to-nvgpu-async), but kernel @gemm_nt is aref IR (made by aref-partition): run convert-aref-to-nvgpu-async first
// TWICE: tawa-opt: {{.*}}error: nvgpu_async.role_dispatch: ping-pong: kernel @gemm_nt: the consumers already take turns
