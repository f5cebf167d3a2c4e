// Inputs loaded by the producer warpgroup's threads (thread-loads): the
// parameter is a global tensor, the slot's `full` barrier counts 129 arrivals
// (the TMA copies' expect_tx, which arms only their bytes, and each of the
// 128 producer threads after its thread loads), the producer's thread_load
// says whether its copies are asynchronous and every thread arrives
// (thread_loads_arrive); the consumer fences for the async proxy after its
// wait. At the thread level the whole producer warpgroup runs the role (no
// branch to thread 0 alone), thread 0 alone arms the barrier and issues TMA
// copies; the copies are chosen at run time by uniform branches: cp.async of
// 16 (.cg), 8 and 4 bytes (.ca) with a source size (0 outside the tensor:
// zero fill) through the 128-byte swizzle, left in flight; 2-byte and 1-byte
// loads stored in 16-byte pieces and fenced. The arrive: noinc where the
// copies were asynchronous, else a counted cp.async arrive and a release
// arrive that publishes the stores.
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{thread-loads="b" tuned=false num-stages=2}' | filecheck %s --check-prefix=NV
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{thread-loads="b" tuned=false num-stages=2}' -t ptx | filecheck %s --check-prefix=PTX
// RUN: tawa-opt %examples/gemm_fp8.mlir -p 'tawa-hopper-pipeline{thread-loads="a,b" tuned=false num-stages=2}' -t ptx | filecheck %s --check-prefix=FP8

// NV-LABEL: func.func @gemm_nt(
// NV-SAME:    %b: !nvgpu_async.global<?x?xbf16>
// NV-SAME:    #nvgpu_async.param<global 1 : !nvgpu_async.global<?x?xbf16>>
// NV:         nvgpu_async.mbarrier_init %ring0_full, count = 129
// NV:         nvgpu_async.role_dispatch
// NV:         nvgpu_async.mbarrier_wait %ring0_empty
// NV-NEXT:    nvgpu_async.mbarrier_arrive_expect_tx %ring0_full[%slot], bytes = 16384
// NV-NEXT:    nvgpu_async.tma_load %a[
// NV-NEXT:    %[[ASYNC:.*]] = nvgpu_async.thread_load %b[%{{.*}}, %k], %ring0_1[%slot] : !nvgpu_async.global<?x?xbf16>, !nvgpu_async.smem<2x128x64xbf16>
// NV-NEXT:    nvgpu_async.thread_loads_arrive %ring0_full[%slot] after(%[[ASYNC]])
// NV:         nvgpu_async.mbarrier_wait %ring0_full
// NV-NEXT:    nvgpu_async.fence_proxy_async

// PTX-LABEL: .entry gemm_nt(
// PTX:         setp.eq.u32 %[[LEADER:p[0-9]+]], %r{{[0-9]+}}, 0;
// PTX:         mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 129;
// PTX:         setmaxnreg.dec.sync.aligned.u32 24;
// PTX-NOT:     bra L_
// PTX:       L_loop_
// PTX:         @%[[LEADER]] mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r{{[0-9]+}}], 16384;
// PTX:         @%[[LEADER]] cp.async.bulk.tensor.2d
// each width a loop over the thread's pieces, 16 bytes first
// PTX:         @!%[[W16:p[0-9]+]] bra.uni L_else_
// PTX:       L_loop_
// the swizzle: piece ^ ((offset >> 7) & 7), as TMA writes it
// PTX:         shr.u32 %[[PH:r[0-9]+]], %[[LIN:r[0-9]+]], 7;
// PTX-NEXT:    and.b32 %[[PH]], %[[PH]], 7;
// PTX-NEXT:    shl.b32 %[[PH]], %[[PH]], 4;
// PTX-NEXT:    xor.b32 %[[LIN]], %[[LIN]], %[[PH]];
// PTX:         selp.b64 %[[A:rd[0-9]+]], %[[A]], %rd{{[0-9]+}}, %[[IN:p[0-9]+]];
// PTX-NEXT:    selp.b32 %[[N:r[0-9]+]], 16, 0, %[[IN]];
// PTX-NEXT:    cp.async.cg.shared.global [%r{{[0-9]+}}], [%[[A]]], 16, %[[N]];
// PTX-NEXT:    add.sat.s32 %r{{[0-9]+}}, %r{{[0-9]+}}, 128;
// PTX:       L_else_
// PTX:         cp.async.ca.shared.global [%[[D8:r[0-9]+]]], [%rd{{[0-9]+}}], 8, %r{{[0-9]+}};
// PTX-NEXT:    cp.async.ca.shared.global [%[[D8]]+8], [%rd{{[0-9]+}}], 8, %r{{[0-9]+}};
// PTX:       L_else_
// PTX-COUNT-4: cp.async.ca.shared.global [%r{{[0-9+]+}}], [%rd{{[0-9]+}}], 4, %r{{[0-9]+}};
// PTX:       L_else_
// PTX:         ld.global.nc.u16 %r
// PTX:         selp.b32
// PTX:         prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 21520;
// PTX:         st.shared.v4.b32
// PTX:       L_done_
// PTX-NEXT:    fence.proxy.async.shared::cta;
// PTX-NOT:     bar.sync 5
// the arrive: the 4-byte test again picks the kind, every thread arrives
// PTX:         @!%[[W4:p[0-9]+]] bra.uni L_else_
// PTX-NEXT:    cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%[[FULL:r[0-9]+]]];
// PTX:       L_else_
// PTX-NEXT:    cp.async.mbarrier.arrive.shared::cta.b64 [%[[FULL]]];
// PTX-NEXT:    mbarrier.arrive.shared::cta.b64 _, [%[[FULL]]];
// the consumer: the proxy fence after its wait, before wgmma reads the slot
// PTX:         mbarrier.try_wait.parity.shared::cta.b64
// PTX:         fence.proxy.async.shared::cta;
// PTX:         wgmma.fence.sync.aligned;

// FP8-LABEL: .entry gemm_fp8_tensorwise(
// FP8-NOT:     cp.async.bulk.tensor
// FP8:         mbarrier.init.shared::cta.b64 [%r{{[0-9]+}}], 128;
// FP8:         cp.async.cg.shared.global
// FP8:         ld.global.nc.s8
// FP8:         prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 64;
// FP8:         prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 21520;
// FP8:         st.shared.v4.b32
// FP8:         and.pred
// FP8:         cp.async.mbarrier.arrive.noinc.shared::cta.b64
// FP8-LABEL: .entry gemm_fp8_e4m3_e5m2(
