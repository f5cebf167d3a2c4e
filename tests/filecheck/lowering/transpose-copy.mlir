// An 8-bit B operand loaded K x N (MN-major: here B stored K x N; in
// attention_fp8_v.mlir a V tile [keys, D]), which wgmma reads only K-major:
// its ring holds the tile transposed (N x K) and the consumer reads it through
// a transposed view (K-major); TMA loads the tile into a one-slot staging
// buffer whose own barrier (one arrival: the expect_tx) the producer's threads
// wait for with the put's parity, then copy it transposed into the slot,
// fence, meet at their named barrier, and one arrives on `full` (two
// arrivals: A's expect_tx and that one). At the thread level: 4x4-byte
// blocks, four 32-bit shared loads, eight byte permutes, four 32-bit shared
// stores, in a loop over the thread's blocks.
// RUN: tawa-opt %s -p 'tawa-hopper-pipeline{tuned=false num-stages=2}' | filecheck %s --check-prefix=NV
// RUN: tawa-opt %s -p 'tawa-hopper-pipeline{tuned=false num-stages=2}' -t ptx | filecheck %s --check-prefix=PTX

func.func @gemm_fp8_nn(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["K", "N"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c128 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%k, %n0] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %next = tile.dot %ta, %tb, %acc_k : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// NV-LABEL: func.func @gemm_fp8_nn(
// NV:         %[[RING:.*]] = nvgpu_async.smem_alloc offset = 32768 : !nvgpu_async.smem<2x128x128xf8E4M3FN>
// NV-NEXT:    %[[STAGING:.*]] = nvgpu_async.smem_alloc offset = 65536 : !nvgpu_async.smem<1x128x128xf8E4M3FN>
// NV:         %[[FULL:.*]] = nvgpu_async.mbarrier_alloc {{.*}} : !nvgpu_async.mbarrier<2>
// NV:         %[[STAGED:.*]] = nvgpu_async.mbarrier_alloc {{.*}} : !nvgpu_async.mbarrier<1>
// NV:         nvgpu_async.mbarrier_init %[[FULL]], count = 2
// NV:         nvgpu_async.mbarrier_init %[[STAGED]], count = 1
// NV:         nvgpu_async.role_dispatch
// NV:         nvgpu_async.mbarrier_arrive_expect_tx %[[FULL]][%[[SLOT:.*]]], bytes = 16384
// NV-NEXT:    nvgpu_async.tma_load %a[
// NV:         nvgpu_async.mbarrier_arrive_expect_tx %[[STAGED]][%[[C0:.*]]], bytes = 16384
// NV-NEXT:    nvgpu_async.tma_load %b[%k, %{{.*}}], %[[STAGING]][%[[C0]]], %[[STAGED]][%[[C0]]]
// NV:         %[[PARITY:.*]] = arith.andi %{{.*}}, %{{.*}} : index
// NV-NEXT:    nvgpu_async.mbarrier_wait %[[STAGED]][%[[C0]]], parity %[[PARITY]]
// NV-NEXT:    nvgpu_async.transpose_copy %[[STAGING]][%[[C0]]], %[[RING]][%[[SLOT]]]
// NV-NEXT:    nvgpu_async.fence_proxy_async
// NV-NEXT:    nvgpu_async.producer_barrier
// NV-NEXT:    nvgpu_async.mbarrier_arrive thread %[[FULL]][%[[SLOT]]]
// NV:         %[[VIEW:.*]] = nvgpu_async.smem_slot %[[RING]][%{{.*}}] : !nvgpu_async.smem<2x128x128xf8E4M3FN> -> !nvgpu_async.smem_view<128x128xf8E4M3FN>
// NV-NEXT:    %[[KMAJOR:.*]] = nvgpu_async.smem_trans %[[VIEW]] : !nvgpu_async.smem_view<128x128xf8E4M3FN> -> !nvgpu_async.smem_view<128x128xf8E4M3FN, transposed>
// NV:         nvgpu_async.wgmma %{{.*}}, %[[KMAJOR]], %{{.*}}

// PTX-LABEL: .entry gemm_fp8_nn(
// PTX:         setmaxnreg.dec.sync.aligned.u32
// PTX:         @%{{p[0-9]+}} cp.async.bulk.tensor.2d
// PTX:         mbarrier.try_wait.parity
// PTX:       L_loop_
// PTX:         ld.shared.b32 %r{{[0-9]+}}, [%r{{[0-9]+}}];
// PTX-NEXT:    ld.shared.b32
// PTX-NEXT:    ld.shared.b32
// PTX-NEXT:    ld.shared.b32
// PTX-NEXT:    prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 20800;
// PTX-NEXT:    prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 29538;
// PTX-NEXT:    prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 20800;
// PTX-NEXT:    prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 29538;
// PTX-NEXT:    prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 21520;
// PTX-NEXT:    prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 30258;
// PTX-NEXT:    prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 21520;
// PTX-NEXT:    prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 30258;
// PTX:         st.shared.b32
// PTX-NEXT:    st.shared.b32
// PTX-NEXT:    st.shared.b32
// PTX-NEXT:    st.shared.b32
// PTX:         fence.proxy.async.shared::cta;
// PTX-NEXT:    bar.sync 5, 128;
// PTX:         mbarrier.arrive.shared::cta.b64
// PTX:         wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3
