// `-t ptx` prints a complete PTX module for sm_90a.
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{tuned=false num-stages=3 mma-depth=2 num-consumers=2}' -t ptx | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{tuned=false mma-depth=2 num-consumers=2 producer-registers=40 consumer-registers=232}' -t ptx | filecheck %s --check-prefix=REGS
// RUN: tawa-opt %examples/attention.mlir -p 'tawa-hopper-pipeline{tuned=false mma-depth=2 num-consumers=2 num-stages=2}' -t ptx | filecheck %s --check-prefix=ATTN
// RUN: tawa-opt %examples/attention.mlir -p 'tawa-hopper-pipeline{tuned=false num-consumers=3 block-m=192 num-stages=2 mma-depth=1 two-stage=true ping-pong=true}' -t ptx | filecheck %s --check-prefix=TURNS
// RUN: tawa-opt %examples/gemm_epilogue.mlir -p 'tawa-hopper-pipeline{tuned=false num-stages=2 num-consumers=2}' -t ptx | filecheck %s --check-prefix=RESID

// A residual tile, loaded by TMA into a 128-byte-swizzled slot, is read into
// the accumulator layout once its barrier completed: one address per 8-column
// group (chunk c ^ g), one 32-bit load per bf16 pair (the row 8 below at +1024,
// the second 64-column chunk 128 rows of 128 bytes on), then the slot goes back.
// RESID-LABEL: .visible .entry gemm_residual_gelu(
// RESID:         tanh.approx.f32
// RESID:         mbarrier.try_wait.parity.shared::cta.b64
// RESID:         shl.b32 [[G16:%r[0-9]+]], %r{{[0-9]+}}, 4;
// RESID:         xor.b32 [[A0:%r[0-9]+]], [[A0]], [[G16]];
// RESID:         ld.shared.b32 %r{{[0-9]+}}, {{\[}}[[A0]]];
// RESID-NEXT:    ld.shared.b32 %r{{[0-9]+}}, {{\[}}[[A0]]+1024];
// RESID:         ld.shared.b32 %r{{[0-9]+}}, [%r{{[0-9]+}}+16384];
// RESID-NEXT:    ld.shared.b32 %r{{[0-9]+}}, [%r{{[0-9]+}}+17408];
// RESID:         cvt.f32.bf16
// RESID:         mbarrier.arrive.shared::cta.b64 _,
// RESID:         cvt.rn.bf16x2.f32
// RESID:         cp.async.bulk.tensor.2d.global.shared::cta.bulk_group

// MMA turns over three consumer warpgroups: warpgroup w waits on named barrier
// 2 + w and passes to 2 + (w + 1) % 3 (barriers 0 and 1 are the CTA's and the
// consumers'); the last warpgroup opens warpgroup 0's first turn.
// TURNS-LABEL: .visible .entry attention_d64(
// TURNS:         L_else_{{[0-9]+}}:
// TURNS-NEXT:    sub.u32 [[CTID:%r[0-9]+]], %r{{[0-9]+}}, 128;
// TURNS-NEXT:    shr.u32 [[CWG:%r[0-9]+]], [[CTID]], 7;
// TURNS:         add.u32 [[OWN:%r[0-9]+]], [[CWG]], 2;
// TURNS-NEXT:    add.u32 [[NEXT:%r[0-9]+]], [[CWG]], 1;
// TURNS-NEXT:    rem.u32 [[NEXT]], [[NEXT]], 3;
// TURNS-NEXT:    add.u32 [[NEXT]], [[NEXT]], 2;
// TURNS-NEXT:    setp.eq.u32 [[LAST:%p[0-9]+]], [[CWG]], 2;
// TURNS-NEXT:    @[[LAST]] bar.arrive 2, 256;
// TURNS:         bar.sync [[OWN]], 256;
// TURNS-NEXT:    wgmma.fence.sync.aligned;
// TURNS:         wgmma.commit_group.sync.aligned;
// TURNS:         wgmma.commit_group.sync.aligned;
// TURNS-NEXT:    bar.arrive [[NEXT]], 256;

// Register budgets: 24/240 by default with two consumer warpgroups, or as asked.
// REGS-LABEL: .visible .entry gemm_nt(
// REGS:         setmaxnreg.dec.sync.aligned.u32 40;
// REGS:         setmaxnreg.inc.sync.aligned.u32 232;

// CHECK:      .version 8.0
// CHECK-NEXT: .target sm_90a
// CHECK-NEXT: .address_size 64
// CHECK:      .extern .shared .align 1024 .b8 smem[];
// CHECK-LABEL: .visible .entry gemm_nt(
// CHECK-NEXT:    .param .align 64 .b8 p_a[128],
// CHECK-NEXT:    .param .u32 p_a_dim1,
// CHECK-NEXT:    .param .align 64 .b8 p_b[128],
// CHECK-NEXT:    .param .align 64 .b8 p_c[128]
// CHECK:       .maxntid 384, 1, 1
// CHECK-NEXT:  .minnctapersm 1
// CHECK:         mbarrier.init.shared::cta.b64
// CHECK:         fence.mbarrier_init.release.cluster;
// CHECK:         bar.sync 0;
// CHECK:         setmaxnreg.dec.sync.aligned.u32 24;
// CHECK:         prefetch.tensormap [%rd{{[0-9]+}}];
// CHECK:         mbarrier.try_wait.parity.shared::cta.b64
// CHECK:         mbarrier.arrive.expect_tx.shared::cta.b64 _, [%{{.*}}], 32768;
// CHECK:         cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK:         setmaxnreg.inc.sync.aligned.u32 240;
// CHECK:         wgmma.fence.sync.aligned;
// CHECK:         wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK:         wgmma.commit_group.sync.aligned;
// CHECK:         wgmma.wait_group.sync.aligned 1;
// CHECK:         mbarrier.arrive.shared::cta.b64 _,
// The epilogue goes through a 128-byte-swizzled staging tile and TMA: the first
// consumer thread waits for the previous store, everyone writes and fences, it
// stores one 64-column box at a time.
// CHECK:         cvt.rn.bf16x2.f32
// CHECK:         @[[LEAD:%p[0-9]+]] cp.async.bulk.wait_group.read 0;
// CHECK-NEXT:    bar.sync 1, 256;
// CHECK:         xor.b32
// CHECK:         st.shared.b32 [%r{{[0-9]+}}{{(\+0)?}}], %r{{[0-9]+}};
// CHECK:         st.shared.b32 [%r{{[0-9]+}}+16384], %r{{[0-9]+}};
// CHECK:         fence.proxy.async.shared::cta;
// CHECK-NEXT:    bar.sync 1, 256;
// CHECK:         @[[LEAD]] cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}{{(\+0)?}}];
// CHECK:         @[[LEAD]] cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd{{[0-9]+}}, {%r{{[0-9]+}}, %r{{[0-9]+}}}], [%r{{[0-9]+}}+16384];
// CHECK-NEXT:    @[[LEAD]] cp.async.bulk.commit_group;
// CHECK:         @[[LEAD]] cp.async.bulk.wait_group.read 0;

// Row max and sum: per-thread, then across the quad of lanes holding a row.
// ATTN-LABEL: .visible .entry attention_d64(
// ATTN:         cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// ATTN:         max.NaN.f32
// ATTN:         shfl.sync.bfly.b32 %{{.*}}, %{{.*}}, 1, 31, -1;
// ATTN:         shfl.sync.bfly.b32 %{{.*}}, %{{.*}}, 2, 31, -1;
// ATTN:         ex2.approx.ftz.f32
// P = bf16(S) goes to the second wgmma straight from registers.
// ATTN:         wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1, 1;
