// FP8 kernels lowered to nvgpu_async: byte counts for 1-byte elements (tensor
// maps, rings, expect_tx), k32 wgmmas on K-major operands, block scales read out
// of their slot; 64-byte rows (head dim 64) swizzled at 64 bytes. fp8-ptx.mlir
// checks the PTX printed from them.
// RUN: tawa-opt %examples/gemm_fp8.mlir -p 'aref-partition,pipeline{num-stages=3 mma-depth=1},convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=GEMM
// RUN: tawa-opt %examples/attention_fp8.mlir -p 'aref-partition,cooperative,pipeline{num-stages=2},convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=ATTN
// RUN: tawa-opt %examples/gemm_fp8.mlir -p tawa-hopper-pipeline | filecheck %s --check-prefix=HOPPER
// RUN: tawa-opt %examples/gemm_fp8.mlir -p tawa-hopper-pipeline | filecheck %s --check-prefix=OVERLAP

// A 128x128 e4m3 tile is 128 bytes a row: one 128-byte swizzle chunk, one box.
// GEMM-LABEL: func.func @gemm_fp8_tensorwise(%a: !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [128, 128], swizzle = 128>, %a_dim1: index, %b: !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [128, 128], swizzle = 128>, %c: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %scale_a: f32, %scale_b: f32)
// GEMM-NEXT:    nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<3x128x128xf8E4M3FN>
// GEMM-NEXT:    nvgpu_async.smem_alloc offset = 49152 : !nvgpu_async.smem<3x128x128xf8E4M3FN>
// GEMM:         nvgpu_async.mbarrier_arrive_expect_tx %{{.*}}, bytes = 32768
// GEMM:         nvgpu_async.wgmma %ta, %tbt, %acc_k : !nvgpu_async.smem_view<128x128xf8E4M3FN>, !nvgpu_async.smem_view<128x128xf8E4M3FN, transposed>

// GEMM-LABEL: func.func @gemm_fp8_e4m3_e5m2(
// GEMM:         nvgpu_async.wgmma %ta, %tbt, %acc_k : !nvgpu_async.smem_view<128x128xf8E4M3FN>, !nvgpu_async.smem_view<128x128xf8E5M2, transposed>

// An e4m3 output: a 1-byte staging tile and a 128x128 TMA store box.
// GEMM-LABEL: func.func @gemm_fp8_e4m3_out(
// GEMM-SAME:    %c: !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [128, 128], swizzle = 128>
// GEMM:         %c_staging = nvgpu_async.smem_alloc offset = 98304 : !nvgpu_async.smem<1x128x128xf8E4M3FN>
// GEMM:         %out = arith.truncf %scaled : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<128x128xf8E4M3FN, #nvgpu_async.frag<acc, warpgroups = 1>>
// GEMM:         nvgpu_async.tma_store %c_staging[%{{.*}}], %c[%{{.*}}, %{{.*}}] : !nvgpu_async.smem<1x128x128xf8E4M3FN>

// Block scales: A's 128 group scales of one K block and a 16-byte box whose first
// element is B's block scale travel in the slot with the tiles (16384 + 16384 +
// 512 + 16 bytes); the consumer threads read them, so each thread releases.
// GEMM-LABEL: func.func @gemm_fp8_blockwise(
// GEMM-SAME:    %scale_a: !nvgpu_async.tensor_map<?x?xf32, box = [1, 128], swizzle = 0>, %scale_b: !nvgpu_async.tensor_map<?x?xf32, box = [1, 4], swizzle = 0>
// GEMM:         nvgpu_async.smem_alloc offset = 98304 : !nvgpu_async.smem<3x128xf32>
// GEMM-NEXT:    nvgpu_async.smem_alloc offset = 101376 : !nvgpu_async.smem<3x4xf32>
// GEMM:         nvgpu_async.mbarrier_init %ring0_empty, count = 128
// GEMM:         nvgpu_async.mbarrier_arrive_expect_tx %{{.*}}, bytes = 33296
// GEMM:         nvgpu_async.tma_load %scale_b[%pid_n, %kb4], %ring0_3[%slot]
// GEMM:       } consumer {
// GEMM:         %part = nvgpu_async.wgmma %ta, %tbt, %zero_1
// GEMM:         %sb0 = nvgpu_async.smem_extract %sb4[0] : !nvgpu_async.smem_view<4xf32>
// GEMM:         %sb = arith.select %is3, %sb3, %sb012 : f32
// GEMM-NEXT:    %sb_t = tile.splat %sb : f32 -> tensor<128xf32, #nvgpu_async.frag<row, warpgroups = 1>>
// GEMM:         nvgpu_async.mbarrier_arrive thread %ring0_empty[%{{.*}}]

// Head dim 64: Q and K rows are 64 bytes, moved and read 64-byte swizzled; V^T's
// rows are 128 keys; P goes to the second wgmma as an e4m3 register tile.
// ATTN-LABEL: func.func @attention_d64_fp8(%q: !nvgpu_async.tensor_map<?x?x64xf8E4M3FN, box = [1, 128, 64], swizzle = 64>, %k: !nvgpu_async.tensor_map<?x?x64xf8E4M3FN, box = [1, 128, 64], swizzle = 64>, %k_dim1: index, %v_t: !nvgpu_async.tensor_map<?x64x?xf8E4M3FN, box = [1, 64, 128], swizzle = 128>, %o: !nvgpu_async.tensor_map<?x?x64xbf16, box = [1, 128, 64], swizzle = 128>
// ATTN-NEXT:    nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x128x64xf8E4M3FN>
// ATTN-NEXT:    nvgpu_async.smem_alloc offset = 8192 : !nvgpu_async.smem<2x128x64xf8E4M3FN>
// ATTN-NEXT:    nvgpu_async.smem_alloc offset = 24576 : !nvgpu_async.smem<2x64x128xf8E4M3FN>
// ATTN:         nvgpu_async.mbarrier_arrive_expect_tx %{{.*}}, bytes = 8192
// ATTN:         nvgpu_async.mbarrier_arrive_expect_tx %{{.*}}, bytes = 16384
// ATTN:         %s = nvgpu_async.wgmma %q_t, %k_tt, %{{.*}} : !nvgpu_async.smem_view<128x64xf8E4M3FN>, !nvgpu_async.smem_view<64x128xf8E4M3FN, transposed>
// ATTN:         %p_lo = arith.truncf %p : {{.*}} to tensor<128x128xf8E4M3FN, #nvgpu_async.frag<acc, warpgroups = 2>>
// ATTN-NEXT:    nvgpu_async.wgmma_fence
// ATTN-NEXT:    %acc_new = nvgpu_async.wgmma %p_lo, %v_blk, %acc_scaled : tensor<128x128xf8E4M3FN, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem_view<128x64xf8E4M3FN, transposed>

// The whole Hopper pipeline takes every FP8 GEMM down to nvgpu_async IR.
// HOPPER-COUNT-6: nvgpu_async.role_dispatch
// HOPPER-NOT: tile.dot

// The block-scaled GEMM two K blocks an iteration: both blocks' MMA groups are
// issued before either partial product is read, so the first promotion waits
// for one group only (the second block's stays in flight under it); the slot,
// read by both, goes back once both retire, before the second promotion.
// OVERLAP-LABEL: func.func @gemm_fp8_blockwise_overlap(
// OVERLAP:         nvgpu_async.mbarrier_arrive_expect_tx %{{.*}}, bytes = 66576
// OVERLAP:       } consumer {
// OVERLAP:         %part0 = nvgpu_async.wgmma %ta0, %tbt0, %zero
// OVERLAP-NOT:     nvgpu_async.wgmma_wait_group
// OVERLAP:         %part1 = nvgpu_async.wgmma %ta1, %tbt1, %zero
// OVERLAP-NOT:     pending = 0
// OVERLAP:         nvgpu_async.wgmma_wait_group pending = 1
// OVERLAP-NEXT:    %p0 = arith.mulf %part0, %s0_b
// OVERLAP:         nvgpu_async.wgmma_wait_group pending = 0
// OVERLAP:         nvgpu_async.mbarrier_arrive thread %ring0_empty
// OVERLAP:         %p1 = arith.mulf %part1, %s1_b
