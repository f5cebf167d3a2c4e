// Clusters in the lowering: the loads every block of a cluster issues alike are
// multicast, their slots are released in every block, and cluster barriers
// bracket the role dispatch; then the PTX for it.
// RUN: tawa-opt %examples/gemm.mlir -p 'cluster,aref-partition,cooperative,pipeline{num-stages=3},convert-aref-to-nvgpu-async' | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{tuned=false mma-depth=2 cluster=2 num-consumers=2 num-stages=3}' -t ptx | filecheck %s --check-prefix=PTX
// RUN: not tawa-opt %s -p 'aref-partition,pipeline,convert-aref-to-nvgpu-async' 2>&1 | filecheck %s --check-prefix=NOTHING

// A (rows of pid_x) stays local; B (columns of pid_y) is multicast. Each block's
// `full` still expects the whole slot, A and both halves of B; `empty` counts
// the two consumer warpgroups of both blocks.
// CHECK-LABEL: func.func @gemm_nt
// CHECK-SAME:    tile.cluster = 2 : i64
// CHECK-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = {{[0-9]+}}, cluster = 2>
// CHECK:         nvgpu_async.mbarrier_init %ring0_full, count = 1
// CHECK-NEXT:    nvgpu_async.mbarrier_init %ring0_empty, count = 4
// CHECK-NEXT:    nvgpu_async.fence_mbarrier_init
// CHECK-NEXT:    nvgpu_async.cta_barrier
// CHECK-NEXT:    nvgpu_async.cluster_barrier
// CHECK-NEXT:    nvgpu_async.role_dispatch
// CHECK:           nvgpu_async.mbarrier_arrive_expect_tx %ring0_full[%[[S:.*]]], bytes = 32768
// CHECK-NEXT:      nvgpu_async.tma_load %a[%m0, %k], %ring0[%[[S]]], %ring0_full[%[[S]]] :
// CHECK-NEXT:      nvgpu_async.tma_load %b[%n0, %k], %ring0_1[%[[S]]], %ring0_full[%[[S]]] multicast(2) :
// CHECK:         } consumer {
// CHECK:           nvgpu_async.mbarrier_arrive warpgroup %ring0_empty[%{{.*}}] cluster(2)
// CHECK:           nvgpu_async.tma_store_commit
// CHECK-NEXT:      nvgpu_async.wgmma_wait_group pending = 0
// CHECK-NEXT:      nvgpu_async.tma_store_wait pending = 0
// CHECK-NEXT:    }
// CHECK-NEXT:    nvgpu_async.cluster_barrier
// CHECK-NEXT:    func.return

// In PTX the cluster shape is fixed at compile time. gemm_nn's B tile is two
// 64-column boxes: block r copies box r (column offset r * 64, 8192 bytes into
// the slot) into both blocks. A consumer warpgroup's thread r releases the slot
// in block r.
// PTX-LABEL: .entry gemm_nn(
// PTX:       .reqnctapercluster 2, 1, 1
// PTX:       mov.u32 %[[RANK:r[0-9]+]], %cluster_ctarank;
// PTX:       fence.mbarrier_init.release.cluster;
// PTX-NEXT:  bar.sync 0;
// PTX-NEXT:  barrier.cluster.arrive.release;
// PTX-NEXT:  barrier.cluster.wait.acquire;
// PTX:       mov.b16 %[[MASK:h[0-9]+]], 3;
// PTX-NEXT:  mad.lo.s32 %[[COL:r[0-9]+]], %[[RANK]], 64, %{{r[0-9]+}};
// PTX-NEXT:  mad.lo.u32 %[[DST:r[0-9]+]], %[[RANK]], 8192, %{{r[0-9]+}};
// PTX-NEXT:  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%[[DST]]{{(\+0)?}}], [%{{rd[0-9]+}}, {%[[COL]], %{{r[0-9]+}}}], [%{{r[0-9]+}}], %[[MASK]];
// PTX:       setp.lt.u32 %[[SIG:p[0-9]+]], %[[LANE:r[0-9]+]], 2;
// PTX-NEXT:  @%[[SIG]] mapa.shared::cluster.u32 %[[REMOTE:r[0-9]+]], %{{r[0-9]+}}, %[[LANE]];
// PTX-NEXT:  @%[[SIG]] mbarrier.arrive.shared::cluster.b64 _, [%[[REMOTE]]];
// PTX:       barrier.cluster.arrive.release;
// PTX-NEXT:  barrier.cluster.wait.acquire;
// PTX-NEXT:  ret;

// A hand-marked kernel whose only load follows program_id(x) has nothing to
// multicast; the lowering says so instead of building a cluster for nothing.
// NOTHING: error: func.func: convert-aref-to-nvgpu-async: @rows runs in clusters of 2 but no producer load is the same in every block of a cluster
func.func @rows(%a: !tile.desc<?x64xbf16, box = [128, 64]>, %c: !tile.desc<?x128xbf16, box = [128, 128]>) attributes {tile.kernel, tile.cluster = 2 : i64} {
  %pid = tile.program_id x
  %bm = arith.constant 128 : index
  %c0 = arith.constant 0 : index
  %m0 = arith.muli %pid, %bm : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %bm step %bm iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %t = tile.load %a[%m0, %c0] : !tile.desc<?x64xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tt = tile.trans %t : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %t, %tt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x128xbf16, box = [128, 128]>
  func.return
}
