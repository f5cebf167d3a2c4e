// RUN: tawa-opt %s --split-input-file | filecheck %s
// RUN: TAWA_ROUNDTRIP

// A hand-written warp-specialized GEMM step in the Hopper dialect: every op and type.

// CHECK-LABEL: func.func @ws_gemm_step
// CHECK:      %[[A:.*]] = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
// CHECK-NEXT: %[[B:.*]] = nvgpu_async.smem_alloc offset = 32768 : !nvgpu_async.smem<2x128x64xbf16>
// CHECK-NEXT: %[[E:.*]] = nvgpu_async.smem_alloc offset = 65536 : !nvgpu_async.smem<1x128x128xbf16>
// CHECK-NEXT: %[[FULL:.*]] = nvgpu_async.mbarrier_alloc offset = 98304 : !nvgpu_async.mbarrier<2>
// CHECK-NEXT: %[[EMPTY:.*]] = nvgpu_async.mbarrier_alloc offset = 98320 : !nvgpu_async.mbarrier<2>
// CHECK-NEXT: nvgpu_async.mbarrier_init %[[FULL]], count = 1 : !nvgpu_async.mbarrier<2>
// CHECK-NEXT: nvgpu_async.mbarrier_init %[[EMPTY]], count = 1 : !nvgpu_async.mbarrier<2>
// CHECK-NEXT: nvgpu_async.fence_mbarrier_init
// CHECK-NEXT: nvgpu_async.cta_barrier
// CHECK-NEXT: nvgpu_async.role_dispatch consumers = 1 registers = [40, 232] producer {
// CHECK-NEXT:   nvgpu_async.setmaxnreg dec 40
// CHECK-NEXT:   nvgpu_async.mbarrier_wait %[[EMPTY]][%s], parity %ph : !nvgpu_async.mbarrier<2>
// CHECK-NEXT:   nvgpu_async.mbarrier_arrive_expect_tx %[[FULL]][%s], bytes = 32768 : !nvgpu_async.mbarrier<2>
// CHECK-NEXT:   nvgpu_async.tma_load %ma[%i, %i], %[[A]][%s], %[[FULL]][%s] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
// CHECK-NEXT:   nvgpu_async.tma_load %ma[%i, %i], %[[B]][%s], %[[FULL]][%s] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
// CHECK-NEXT: } consumer {
// CHECK-NEXT:   nvgpu_async.setmaxnreg inc 232
// CHECK-NEXT:   nvgpu_async.mbarrier_wait %[[FULL]][%s], parity %ph : !nvgpu_async.mbarrier<2>
// CHECK-NEXT:   %[[VA:.*]] = nvgpu_async.smem_slot %[[A]][%s] : !nvgpu_async.smem<2x128x64xbf16> -> !nvgpu_async.smem_view<128x64xbf16>
// CHECK-NEXT:   %[[VB:.*]] = nvgpu_async.smem_slot %[[B]][%s] : !nvgpu_async.smem<2x128x64xbf16> -> !nvgpu_async.smem_view<128x64xbf16>
// CHECK-NEXT:   %[[VBT:.*]] = nvgpu_async.smem_trans %[[VB]] : !nvgpu_async.smem_view<128x64xbf16> -> !nvgpu_async.smem_view<64x128xbf16, transposed>
// CHECK-NEXT:   nvgpu_async.wgmma_fence
// CHECK-NEXT:   %[[D:.*]] = nvgpu_async.wgmma %[[VA]], %[[VBT]], %acc : !nvgpu_async.smem_view<128x64xbf16>, !nvgpu_async.smem_view<64x128xbf16, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:   nvgpu_async.wgmma_commit_group
// CHECK-NEXT:   nvgpu_async.wgmma_wait_group pending = 0
// CHECK-NEXT:   nvgpu_async.mbarrier_arrive warpgroup %[[EMPTY]][%s] : !nvgpu_async.mbarrier<2>
// CHECK-NEXT:   %[[P:.*]] = arith.truncf %[[D]] : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:   %{{.*}} = nvgpu_async.smem_load %[[VA]] : !nvgpu_async.smem_view<128x64xbf16> -> tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:   nvgpu_async.store_global %[[P]], %gc[%i, %i] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.global<?x?xbf16>
// CHECK-NEXT:   nvgpu_async.smem_store %[[P]], %[[E]][%i] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.smem<1x128x128xbf16>
// CHECK-NEXT:   nvgpu_async.fence_proxy_async
// CHECK-NEXT:   %[[T:.*]] = nvgpu_async.thread_load %gc[%i, %i], %[[B]][%s] : !nvgpu_async.global<?x?xbf16>, !nvgpu_async.smem<2x128x64xbf16>
// CHECK-NEXT:   nvgpu_async.thread_loads_arrive %[[FULL]][%s] after(%[[T]]) : !nvgpu_async.mbarrier<2>
// CHECK-NEXT:   nvgpu_async.launch_dependents
// CHECK-NEXT:   nvgpu_async.grid_dependency_wait
// CHECK-NEXT:   nvgpu_async.consumer_barrier
// CHECK-NEXT:   nvgpu_async.prefetch_tensor_map %mc : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>
// CHECK-NEXT:   nvgpu_async.tma_store %[[E]][%i], %mc[%i, %i] : !nvgpu_async.smem<1x128x128xbf16>, !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>
// CHECK-NEXT:   nvgpu_async.tma_store_commit
// CHECK-NEXT:   nvgpu_async.tma_store_wait pending = 0
// CHECK-NEXT: }
func.func @ws_gemm_step(%ma: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>,
                        %mc: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>,
                        %gc: !nvgpu_async.global<?x?xbf16>,
                        %acc: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>,
                        %i: index, %s: index, %ph: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %b = nvgpu_async.smem_alloc offset = 32768 : !nvgpu_async.smem<2x128x64xbf16>
  %e = nvgpu_async.smem_alloc offset = 65536 : !nvgpu_async.smem<1x128x128xbf16>
  %full = nvgpu_async.mbarrier_alloc offset = 98304 : !nvgpu_async.mbarrier<2>
  %empty = nvgpu_async.mbarrier_alloc offset = 98320 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_init %full, count = 1 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_init %empty, count = 1 : !nvgpu_async.mbarrier<2>
  nvgpu_async.fence_mbarrier_init
  nvgpu_async.cta_barrier
  nvgpu_async.role_dispatch consumers = 1 registers = [40, 232] producer {
    nvgpu_async.setmaxnreg dec 40
    nvgpu_async.mbarrier_wait %empty[%s], parity %ph : !nvgpu_async.mbarrier<2>
    nvgpu_async.mbarrier_arrive_expect_tx %full[%s], bytes = 32768 : !nvgpu_async.mbarrier<2>
    nvgpu_async.tma_load %ma[%i, %i], %a[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
    nvgpu_async.tma_load %ma[%i, %i], %b[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  } consumer {
    nvgpu_async.setmaxnreg inc 232
    nvgpu_async.mbarrier_wait %full[%s], parity %ph : !nvgpu_async.mbarrier<2>
    %va = nvgpu_async.smem_slot %a[%s] : !nvgpu_async.smem<2x128x64xbf16> -> !nvgpu_async.smem_view<128x64xbf16>
    %vb = nvgpu_async.smem_slot %b[%s] : !nvgpu_async.smem<2x128x64xbf16> -> !nvgpu_async.smem_view<128x64xbf16>
    %vbt = nvgpu_async.smem_trans %vb : !nvgpu_async.smem_view<128x64xbf16> -> !nvgpu_async.smem_view<64x128xbf16, transposed>
    nvgpu_async.wgmma_fence
    %d = nvgpu_async.wgmma %va, %vbt, %acc : !nvgpu_async.smem_view<128x64xbf16>, !nvgpu_async.smem_view<64x128xbf16, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    nvgpu_async.wgmma_commit_group
    nvgpu_async.wgmma_wait_group pending = 0
    nvgpu_async.mbarrier_arrive warpgroup %empty[%s] : !nvgpu_async.mbarrier<2>
    %p = arith.truncf %d : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
    %l = nvgpu_async.smem_load %va : !nvgpu_async.smem_view<128x64xbf16> -> tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
    nvgpu_async.store_global %p, %gc[%i, %i] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.global<?x?xbf16>
    nvgpu_async.smem_store %p, %e[%i] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.smem<1x128x128xbf16>
    nvgpu_async.fence_proxy_async
    %t = nvgpu_async.thread_load %gc[%i, %i], %b[%s] : !nvgpu_async.global<?x?xbf16>, !nvgpu_async.smem<2x128x64xbf16>
    nvgpu_async.thread_loads_arrive %full[%s] after(%t) : !nvgpu_async.mbarrier<2>
    nvgpu_async.launch_dependents
    nvgpu_async.grid_dependency_wait
    nvgpu_async.consumer_barrier
    nvgpu_async.prefetch_tensor_map %mc : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>
    nvgpu_async.tma_store %e[%i], %mc[%i, %i] : !nvgpu_async.smem<1x128x128xbf16>, !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>
    nvgpu_async.tma_store_commit
    nvgpu_async.tma_store_wait pending = 0
  }
  func.return
}

// -----

// Register A operand (P from the accumulator) and fragment layouts for rows/columns.
// CHECK-LABEL: func.func @rs_wgmma
// CHECK: nvgpu_async.wgmma %p, %v, %o : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem_view<128x64xbf16> -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
// CHECK: tile.reduce max %s, axis = 1 : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128xf32, #nvgpu_async.frag<row, warpgroups = 2>>
func.func @rs_wgmma(%p: tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>,
                    %v: !nvgpu_async.smem_view<128x64xbf16>,
                    %o: tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>,
                    %s: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>>,
                    %bias: tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>>) {
  %r = nvgpu_async.wgmma %p, %v, %o : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem_view<128x64xbf16> -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
  %m = tile.reduce max %s, axis = 1 : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128xf32, #nvgpu_async.frag<row, warpgroups = 2>>
  func.return
}

// -----

// A column reduction through its scratch (one f32 row per consumer warp).
// CHECK-LABEL: func.func @column_reduce
// CHECK: nvgpu_async.column_reduce min %s, %scratch : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem<1x512xf32> -> tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>>
func.func @column_reduce(%s: tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>) {
  %scratch = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x512xf32>
  %m = nvgpu_async.column_reduce min %s, %scratch : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem<1x512xf32> -> tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>>
  func.return
}

// -----

// 8-bit inputs: mixed e4m3 / e5m2 from shared memory (both K-major: B is a
// transposed view of an N x K slot), an e4m3 register A (P in FP8 attention),
// and a block scale read out of its slot.
// CHECK-LABEL: func.func @fp8_wgmma
// CHECK: nvgpu_async.wgmma %a, %bt, %acc : !nvgpu_async.smem_view<128x128xf8E4M3FN>, !nvgpu_async.smem_view<128x128xf8E5M2, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK: nvgpu_async.wgmma %p, %vt, %acc : tensor<128x128xf8E4M3FN, #nvgpu_async.frag<acc, warpgroups = 1>>, !nvgpu_async.smem_view<128x128xf8E4M3FN, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK: nvgpu_async.smem_extract %s[0] : !nvgpu_async.smem_view<4xf32>
func.func @fp8_wgmma(%a: !nvgpu_async.smem_view<128x128xf8E4M3FN>,
                     %bt: !nvgpu_async.smem_view<128x128xf8E5M2, transposed>,
                     %p: tensor<128x128xf8E4M3FN, #nvgpu_async.frag<acc, warpgroups = 1>>,
                     %vt: !nvgpu_async.smem_view<128x128xf8E4M3FN, transposed>,
                     %acc: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>,
                     %s: !nvgpu_async.smem_view<4xf32>) {
  %d = nvgpu_async.wgmma %a, %bt, %acc : !nvgpu_async.smem_view<128x128xf8E4M3FN>, !nvgpu_async.smem_view<128x128xf8E5M2, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  %o = nvgpu_async.wgmma %p, %vt, %acc : tensor<128x128xf8E4M3FN, #nvgpu_async.frag<acc, warpgroups = 1>>, !nvgpu_async.smem_view<128x128xf8E4M3FN, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  %scale = nvgpu_async.smem_extract %s[0] : !nvgpu_async.smem_view<4xf32>
  func.return
}

// -----

// MMA turns (ping-pong) between two consumer warpgroups.
// CHECK-LABEL: func.func @mma_turns
// CHECK:      } consumer {
// CHECK-NEXT:   nvgpu_async.mma_turn_init
// CHECK-NEXT:   nvgpu_async.mma_turn_begin
// CHECK-NEXT:   nvgpu_async.mma_turn_end
// CHECK-NEXT: }
func.func @mma_turns() {
  nvgpu_async.role_dispatch consumers = 2 producer {
  } consumer {
    nvgpu_async.mma_turn_init
    nvgpu_async.mma_turn_begin
    nvgpu_async.mma_turn_end
  }
  func.return
}

// -----

// Clusters: a multicast copy, a release in every block, the cluster barrier.
// CHECK-LABEL: func.func @cluster_ops
// CHECK:      nvgpu_async.cluster_barrier
// CHECK-NEXT: nvgpu_async.tma_load %m[%i, %i], %a[%i], %b[%i] multicast(2) : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
// CHECK-NEXT: nvgpu_async.mbarrier_arrive warpgroup %b[%i] cluster(4) : !nvgpu_async.mbarrier<2>
func.func @cluster_ops(%m: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %b = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  nvgpu_async.cluster_barrier
  nvgpu_async.tma_load %m[%i, %i], %a[%i], %b[%i] multicast(2) : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_arrive warpgroup %b[%i] cluster(4) : !nvgpu_async.mbarrier<2>
  func.return
}

// -----

// CHECK-LABEL: func.func @transpose_copy
// CHECK:   nvgpu_async.transpose_copy %s[%i], %b[%j] : !nvgpu_async.smem<1x128x64xf8E4M3FN>, !nvgpu_async.smem<2x64x128xf8E4M3FN>
func.func @transpose_copy(%i: index, %j: index) {
  %s = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x128x64xf8E4M3FN>
  %b = nvgpu_async.smem_alloc offset = 8192 : !nvgpu_async.smem<2x64x128xf8E4M3FN>
  nvgpu_async.transpose_copy %s[%i], %b[%j] : !nvgpu_async.smem<1x128x64xf8E4M3FN>, !nvgpu_async.smem<2x64x128xf8E4M3FN>
  func.return
}
