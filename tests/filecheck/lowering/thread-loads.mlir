// Inputs loaded by the producer warpgroup's threads (thread-loads): the
// parameter is a global tensor, the slot's `full` barrier counts two arrivals
// (the TMA copies' expect_tx, which arms only their bytes, and one producer
// thread after the thread loads), and the producer stores, fences, meets at
// its named barrier and arrives. At the thread level the whole producer
// warpgroup runs the role (no branch to thread 0 alone), thread 0 alone arms
// the barrier, issues TMA copies and arrives; the loads are chosen at run time
// by uniform branches, 16 bytes down to one element, zeros where outside the
// tensor, stored in 16-byte pieces through the 128-byte swizzle.
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{thread-loads="b" tuned=false num-stages=2}' | filecheck %s --check-prefix=NV
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{thread-loads="b" tuned=false num-stages=2}' -t ptx | filecheck %s --check-prefix=PTX
// RUN: tawa-opt %examples/gemm_fp8.mlir -p 'tawa-hopper-pipeline{thread-loads="a,b" tuned=false num-stages=2}' -t ptx | filecheck %s --check-prefix=FP8

// NV-LABEL: func.func @gemm_nt(
// NV-SAME:    %b: !nvgpu_async.global<?x?xbf16>
// NV-SAME:    #nvgpu_async.param<global 1 : !nvgpu_async.global<?x?xbf16>>
// NV:         nvgpu_async.mbarrier_init %ring0_full, count = 2
// NV:         nvgpu_async.role_dispatch
// NV:         nvgpu_async.mbarrier_wait %ring0_empty
// NV-NEXT:    nvgpu_async.mbarrier_arrive_expect_tx %ring0_full[%slot], bytes = 16384
// NV-NEXT:    nvgpu_async.tma_load %a[
// NV-NEXT:    nvgpu_async.thread_load %b[%{{.*}}, %k], %ring0_1[%slot] : !nvgpu_async.global<?x?xbf16>, !nvgpu_async.smem<2x128x64xbf16>
// NV-NEXT:    nvgpu_async.fence_proxy_async
// NV-NEXT:    nvgpu_async.producer_barrier
// NV-NEXT:    nvgpu_async.mbarrier_arrive thread %ring0_full[%slot]

// PTX-LABEL: .entry gemm_nt(
// PTX:         setp.eq.u32 %[[LEADER:p[0-9]+]], %r{{[0-9]+}}, 0;
// PTX:         setmaxnreg.dec.sync.aligned.u32 24;
// PTX-NOT:     bra L_
// PTX:       L_loop_
// PTX:         @%[[LEADER]] mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r{{[0-9]+}}], 16384;
// PTX:         @%[[LEADER]] cp.async.bulk.tensor.2d
// each width a loop over the thread's pieces, 16 bytes first
// PTX:         @!%p{{[0-9]+}} bra.uni L_else_
// PTX:       L_loop_
// the swizzle: piece ^ ((offset >> 7) & 7), as TMA writes it
// PTX:         shr.u32 %[[PH:r[0-9]+]], %[[LIN:r[0-9]+]], 7;
// PTX-NEXT:    and.b32 %[[PH]], %[[PH]], 7;
// PTX-NEXT:    shl.b32 %[[PH]], %[[PH]], 4;
// PTX-NEXT:    xor.b32 %[[LIN]], %[[LIN]], %[[PH]];
// PTX:         selp.b64 %[[A:rd[0-9]+]], %[[A]], %rd{{[0-9]+}}, %[[IN:p[0-9]+]];
// PTX-NEXT:    ld.global.nc.v4.b32 {%[[R0:r[0-9]+]], %{{.*}}}, [%[[A]]];
// PTX-NEXT:    selp.b32 %[[R0]], %[[R0]], 0, %[[IN]];
// PTX:         st.shared.v4.b32 [%r{{[0-9]+}}], {%[[R0]],
// PTX-NEXT:    add.sat.s32 %r{{[0-9]+}}, %r{{[0-9]+}}, 128;
// PTX:       L_else_
// PTX:         ld.global.nc.v2.b32
// PTX:       L_else_
// PTX:         ld.global.nc.b32
// PTX:       L_else_
// PTX:         ld.global.nc.u16 %r
// PTX:         selp.b32
// PTX:         prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 21520;
// PTX:         st.shared.v4.b32
// PTX:         fence.proxy.async.shared::cta;
// PTX-NEXT:    bar.sync 5, 128;
// PTX-NEXT:    mad.lo.u32
// PTX-NEXT:    @%[[LEADER]] mbarrier.arrive.shared::cta.b64 _, [%r{{[0-9]+}}];

// FP8-LABEL: .entry gemm_fp8_tensorwise(
// FP8-NOT:     cp.async.bulk.tensor
// FP8:         ld.global.nc.v4.b32
// FP8:         ld.global.nc.s8
// FP8:         prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 64;
// FP8:         prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 21520;
// FP8:         st.shared.v4.b32
// FP8:         bar.sync 5, 128;
// FP8-LABEL: .entry gemm_fp8_e4m3_e5m2(
