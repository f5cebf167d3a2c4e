// convert-aref-to-nvgpu-async on the examples.
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline{num-stages=3 mma-depth=2},convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=GEMM
// RUN: tawa-opt %examples/gemm_epilogue.mlir -p 'aref-partition,cooperative,pipeline{num-stages=2},convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=EPI
// RUN: tawa-opt %examples/attention.mlir -p 'aref-partition,cooperative,pipeline{num-stages=2},convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=ATTN
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline{num-stages=3 mma-depth=2},convert-aref-to-nvgpu-async{tma-store=false}' | filecheck %s --check-prefix=DIRECT
// RUN: tawa-opt %examples/attention.mlir -p 'aref-partition,cooperative,pipeline{num-stages=3},convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=NOROOM

// Parameters follow their uses: A, B and C are TMA maps (C is stored through a
// staging tile), K a dim.
// GEMM-LABEL: func.func @gemm_nt(%a: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %a_dim1: index, %b: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %c: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>)
// The launch grid: x covers dim 0 of C (argument 2) in blocks of 128, y dim 1.
// GEMM-SAME:    tile.grid = {{\[}}[0 : i64, 2 : i64, 0 : i64, 128 : i64], [1 : i64, 2 : i64, 1 : i64, 128 : i64]]
// GEMM-SAME:    nvgpu_async.abi = [#nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<dim 0 axis 1 : index>, #nvgpu_async.param<map 1 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<map 2 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>]
// GEMM-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 132144, cluster = 1>
// One 3-slot ring per tile, 1024-byte aligned, the staging tile of C, then
// full/empty barriers.
// GEMM-NEXT:    %[[A:.*]] = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<3x128x64xbf16>
// GEMM-NEXT:    %[[B:.*]] = nvgpu_async.smem_alloc offset = 49152 : !nvgpu_async.smem<3x128x64xbf16>
// GEMM-NEXT:    %[[STAGE:.*]] = nvgpu_async.smem_alloc offset = 98304 : !nvgpu_async.smem<1x128x128xbf16>
// GEMM-NEXT:    %[[FULL:.*]] = nvgpu_async.mbarrier_alloc offset = 131072 : !nvgpu_async.mbarrier<3>
// GEMM-NEXT:    %[[EMPTY:.*]] = nvgpu_async.mbarrier_alloc offset = 131096 : !nvgpu_async.mbarrier<3>
// GEMM-NEXT:    nvgpu_async.mbarrier_init %[[FULL]], count = 1
// GEMM-NEXT:    nvgpu_async.mbarrier_init %[[EMPTY]], count = 1
// GEMM-NEXT:    nvgpu_async.fence_mbarrier_init
// GEMM-NEXT:    nvgpu_async.cta_barrier
// GEMM-NEXT:    nvgpu_async.role_dispatch consumers = 1 registers = [40, 232] producer {
// GEMM-NEXT:      nvgpu_async.setmaxnreg dec 40
// The producer warms every tensor map's descriptor, C's (stored by TMA) too.
// GEMM-NEXT:      nvgpu_async.prefetch_tensor_map %a
// GEMM-NEXT:      nvgpu_async.prefetch_tensor_map %b
// GEMM-NEXT:      nvgpu_async.prefetch_tensor_map %c
// The producer waits for a free slot (parity flipped: a fresh barrier lets the
// first round through), arms the full barrier with both tiles' bytes, issues TMA.
// GEMM:           scf.for
// GEMM:             %[[SLOT:.*]] = arith.remui %[[IDX:.*]], %{{.*}} : index
// GEMM:             %[[PAR:.*]] = arith.andi
// GEMM-NEXT:        %[[FLIP:.*]] = arith.xori %[[PAR]], %{{.*}} : index
// GEMM-NEXT:        nvgpu_async.mbarrier_wait %[[EMPTY]][%[[SLOT]]], parity %[[FLIP]]
// GEMM-NEXT:        nvgpu_async.mbarrier_arrive_expect_tx %[[FULL]][%[[SLOT]]], bytes = 32768
// GEMM-NEXT:        nvgpu_async.tma_load %a[%{{.*}}, %{{.*}}], %[[A]][%[[SLOT]]], %[[FULL]][%[[SLOT]]]
// GEMM-NEXT:        nvgpu_async.tma_load %b[%{{.*}}, %{{.*}}], %[[B]][%[[SLOT]]], %[[FULL]][%[[SLOT]]]
// GEMM:         } consumer {
// GEMM-NOT:       setmaxnreg
// GEMM:           scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>, index)
// GEMM:             nvgpu_async.mbarrier_wait %[[FULL]]
// GEMM-NEXT:        %[[TA:.*]] = nvgpu_async.smem_slot %[[A]]
// GEMM-NEXT:        %[[TB:.*]] = nvgpu_async.smem_slot %[[B]]
// GEMM-NEXT:        %[[TBT:.*]] = nvgpu_async.smem_trans %[[TB]] : !nvgpu_async.smem_view<128x64xbf16> -> !nvgpu_async.smem_view<64x128xbf16, transposed>
// GEMM-NEXT:        nvgpu_async.wgmma_fence
// GEMM-NEXT:        %{{.*}} = nvgpu_async.wgmma %[[TA]], %[[TBT]], %[[ACC]]
// GEMM-NEXT:        nvgpu_async.wgmma_commit_group
// With two MMA groups in flight, the previous slot is released after waiting for
// all but the newest group.
// GEMM:             scf.if
// GEMM:               nvgpu_async.wgmma_wait_group pending = 1
// GEMM:               nvgpu_async.mbarrier_arrive warpgroup %[[EMPTY]]
// GEMM:           scf.for %tail
// GEMM-NEXT:        nvgpu_async.wgmma_wait_group pending = 0
// GEMM:             nvgpu_async.mbarrier_arrive warpgroup %[[EMPTY]]
// GEMM:           nvgpu_async.wgmma_wait_group pending = 0
// GEMM-NEXT:      %[[OUT:.*]] = arith.truncf
// The epilogue: wait until the previous store read the staging tile out, write
// it from registers, fence for the async proxy, one thread stores it with TMA;
// the consumer leaves once its stores have read shared memory.
// GEMM-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// GEMM-NEXT:      nvgpu_async.tma_store_wait pending = 0
// GEMM-NEXT:      nvgpu_async.consumer_barrier
// GEMM-NEXT:      nvgpu_async.smem_store %[[OUT]], %[[STAGE]][%[[ZERO]]] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.smem<1x128x128xbf16>
// GEMM-NEXT:      nvgpu_async.fence_proxy_async
// GEMM-NEXT:      nvgpu_async.consumer_barrier
// GEMM-NEXT:      nvgpu_async.tma_store %[[STAGE]][%[[ZERO]]], %c[%{{.*}}, %{{.*}}]
// GEMM-NEXT:      nvgpu_async.tma_store_commit
// GEMM-NEXT:      nvgpu_async.wgmma_wait_group pending = 0
// GEMM-NEXT:      nvgpu_async.tma_store_wait pending = 0
// GEMM-NEXT:    }

// tma-store=false: C is a plain global tensor stored from registers.
// DIRECT-LABEL: func.func @gemm_nt
// DIRECT-SAME:    %c: !nvgpu_async.global<?x?xbf16>)
// DIRECT-SAME:    nvgpu_async.abi = [#nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<dim 0 axis 1 : index>, #nvgpu_async.param<map 1 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<global 2 : !nvgpu_async.global<?x?xbf16>>]
// DIRECT-SAME:    smem = 99376,
// DIRECT-NOT:     smem_store
// DIRECT:         nvgpu_async.store_global %{{.*}}, %c[%{{.*}}, %{{.*}}] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.global<?x?xbf16>

// Where the staging tile does not fit next to the rings (head dim 128, three
// stages of K and V), the output is stored from registers.
// NOROOM-LABEL: func.func @attention_d128
// NOROOM-SAME:    %o: !nvgpu_async.global<?x?x128xbf16>
// NOROOM:       nvgpu_async.store_global

// Two consumer warpgroups: the empty barriers expect two arrivals, or 256 where
// every thread reads the slot (the bias, loaded into registers).
// EPI-LABEL: func.func @gemm_scale_bias_relu
// EPI-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 384,
// EPI:         nvgpu_async.mbarrier_init %{{.*}}, count = 2
// EPI:         nvgpu_async.mbarrier_init %{{.*}}, count = 256
// EPI:         nvgpu_async.role_dispatch consumers = 2 registers = [24, 240] producer {
// EPI:           nvgpu_async.tma_load %bias
// EPI:         } consumer {
// EPI-NEXT:      nvgpu_async.setmaxnreg inc 240
// EPI:           %[[BIAS:.*]] = nvgpu_async.smem_load %{{.*}} : !nvgpu_async.smem_view<128xbf16> -> tensor<128xbf16, #nvgpu_async.frag<col, warpgroups = 2>>
// EPI-NEXT:      arith.extf %[[BIAS]]
// EPI:           nvgpu_async.mbarrier_arrive thread

// A residual tile loaded after the K loop travels like the bias: a ring of its
// own, filled by TMA (128-byte swizzle, two 64-column boxes), read by every
// consumer thread into the accumulator layout, released right after the read.
// EPI-LABEL: func.func @gemm_residual_gelu
// EPI:         %[[RES:.*]] = nvgpu_async.smem_alloc offset = {{[0-9]+}} : !nvgpu_async.smem<1x128x128xbf16>
// EPI:         nvgpu_async.mbarrier_init %[[RES]]_empty, count = 256
// EPI:           nvgpu_async.mbarrier_arrive_expect_tx %[[RES]]_full[%{{.*}}], bytes = 32768
// EPI-NEXT:      nvgpu_async.tma_load %r[%{{.*}}, %{{.*}}], %[[RES]][%{{.*}}], %[[RES]]_full[%{{.*}}] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>
// EPI:         } consumer {
// EPI:           nvgpu_async.mbarrier_wait %[[RES]]_full
// EPI-NEXT:      %[[VIEW:.*]] = nvgpu_async.smem_slot %[[RES]][%{{.*}}] : !nvgpu_async.smem<1x128x128xbf16> -> !nvgpu_async.smem_view<128x128xbf16>
// EPI-NEXT:      %[[R:.*]] = nvgpu_async.smem_load %[[VIEW]] : !nvgpu_async.smem_view<128x128xbf16> -> tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>
// EPI-NEXT:      %[[RF:.*]] = arith.extf %[[R]]
// EPI:           nvgpu_async.mbarrier_arrive thread %[[RES]]_empty
// EPI-NEXT:      arith.addf %{{.*}}, %[[RF]] : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>>

// Attention: row statistics live one value per row; P feeds the second wgmma from
// registers.
// ATTN-LABEL: func.func @attention_d64
// ATTN:         } consumer {
// ATTN:           scf.for {{.*}} -> (tensor<128xf32, #nvgpu_async.frag<row, warpgroups = 2>>, tensor<128xf32, #nvgpu_async.frag<row, warpgroups = 2>>, tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, index)
// ATTN:             nvgpu_async.wgmma %{{.*}}, %{{.*}}, %{{.*}} : !nvgpu_async.smem_view<128x64xbf16>, !nvgpu_async.smem_view<64x128xbf16, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
// ATTN:             tile.reduce max %{{.*}}, axis = 1 : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>> -> tensor<128xf32, #nvgpu_async.frag<row, warpgroups = 2>>
// ATTN:             %[[P:.*]] = arith.truncf %{{.*}} : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>> to tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>
// ATTN:             nvgpu_async.wgmma %[[P]], %{{.*}}, %{{.*}} : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem_view<128x64xbf16> -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
