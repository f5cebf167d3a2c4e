// convert-aref-to-nvgpu-async pattern by pattern, on minimal aref kernels (the
// examples through the whole pipeline are in convert-aref-to-nvgpu-async.mlir).
// RUN: tawa-opt %s --split-input-file -p convert-aref-to-nvgpu-async | filecheck %s
// RUN: tawa-opt %s --split-input-file -p 'convert-aref-to-nvgpu-async{tma-store=false}' | filecheck %s --check-prefix=DIRECT

// LowerKernelSignature: descriptors become tensor maps (loaded, or stored through
// TMA) and tile.dim an index parameter; the ABI, the caller's signature and the
// launch (a producer and one consumer warpgroup; rings, staging tile, barriers
// plus 1024 bytes of alignment slack) are recorded.
// CHECK-LABEL: func.func @ring(%a: !nvgpu_async.tensor_map<?x?xbf16, box = [64, 64], swizzle = 128>, %a_dim1: index, %b: !nvgpu_async.tensor_map<?x?xbf16, box = [64, 64], swizzle = 128>, %c: !nvgpu_async.tensor_map<?x?xf32, box = [64, 32], swizzle = 128>)
// CHECK-SAME:    nvgpu_async.abi = [#nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<?x?xbf16, box = [64, 64], swizzle = 128>>, #nvgpu_async.param<dim 0 axis 1 : index>, #nvgpu_async.param<map 1 : !nvgpu_async.tensor_map<?x?xbf16, box = [64, 64], swizzle = 128>>, #nvgpu_async.param<map 2 : !nvgpu_async.tensor_map<?x?xf32, box = [64, 32], swizzle = 128>>]
// CHECK-SAME:    tile.signature = (!tile.desc<?x?xbf16, box = [64, 64]>, !tile.desc<?x?xbf16, box = [64, 64]>, !tile.desc<?x?xf32, box = [64, 64]>) -> ()
// CHECK-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 50208, cluster = 1>
// LowerWarpSpecialize: one ring per payload tile, the staging tile, full/empty
// barriers, their init and fences, then the role dispatch; the producer lowers
// its budget and warms every tensor map.
// CHECK-NEXT:    %[[A:.*]] = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x64x64xbf16>
// CHECK-NEXT:    %[[B:.*]] = nvgpu_async.smem_alloc offset = 16384 : !nvgpu_async.smem<2x64x64xbf16>
// CHECK-NEXT:    %[[STAGE:.*]] = nvgpu_async.smem_alloc offset = 32768 : !nvgpu_async.smem<1x64x64xf32>
// CHECK-NEXT:    %[[FULL:.*]] = nvgpu_async.mbarrier_alloc offset = 49152 : !nvgpu_async.mbarrier<2>
// CHECK-NEXT:    %[[EMPTY:.*]] = nvgpu_async.mbarrier_alloc offset = 49168 : !nvgpu_async.mbarrier<2>
// CHECK-NEXT:    nvgpu_async.mbarrier_init %[[FULL]], count = 1
// CHECK-NEXT:    nvgpu_async.mbarrier_init %[[EMPTY]], count = 1
// CHECK-NEXT:    nvgpu_async.fence_mbarrier_init
// CHECK-NEXT:    nvgpu_async.cta_barrier
// CHECK-NEXT:    nvgpu_async.role_dispatch consumers = 1 registers = [40, 232] producer {
// CHECK-NEXT:      nvgpu_async.setmaxnreg dec 40
// CHECK-NEXT:      nvgpu_async.prefetch_tensor_map %a
// CHECK-NEXT:      nvgpu_async.prefetch_tensor_map %b
// CHECK-NEXT:      nvgpu_async.prefetch_tensor_map %c
// LowerPut: slot = i mod 2, parity flipped on `empty`, arm `full` with both
// tiles' bytes, one TMA copy per tile (EraseIssuedLoad: no tile.load is left).
// CHECK:           %[[SLOT:.*]] = arith.remui %[[I:.*]], %{{.*}} : index
// CHECK:           %[[ROUND:.*]] = arith.divui %[[I]], %{{.*}} : index
// CHECK-NEXT:      %[[P:.*]] = arith.andi %[[ROUND]], %[[ONE:.*]] : index
// CHECK-NEXT:      %[[FLIP:.*]] = arith.xori %[[P]], %[[ONE]] : index
// CHECK-NEXT:      nvgpu_async.mbarrier_wait %[[EMPTY]][%[[SLOT]]], parity %[[FLIP]]
// CHECK-NEXT:      nvgpu_async.mbarrier_arrive_expect_tx %[[FULL]][%[[SLOT]]], bytes = 16384
// CHECK-NEXT:      nvgpu_async.tma_load %a[%a_dim1, %{{.*}}], %[[A]][%[[SLOT]]], %[[FULL]][%[[SLOT]]] :
// CHECK-NEXT:      nvgpu_async.tma_load %b[%a_dim1, %{{.*}}], %[[B]][%[[SLOT]]], %[[FULL]][%[[SLOT]]] :
// CHECK-NEXT:    } consumer {
// CHECK-NOT:       tile.load
// LowerGet: wait on `full` with the round's parity, views of the slot.
// CHECK:           %[[CSLOT:.*]] = arith.remui
// CHECK:           %[[CPAR:.*]] = arith.andi
// CHECK-NEXT:      nvgpu_async.mbarrier_wait %[[FULL]][%[[CSLOT]]], parity %[[CPAR]]
// CHECK-NEXT:      %[[TA:.*]] = nvgpu_async.smem_slot %[[A]][%[[CSLOT]]] : !nvgpu_async.smem<2x64x64xbf16> -> !nvgpu_async.smem_view<64x64xbf16>
// CHECK-NEXT:      %[[TB:.*]] = nvgpu_async.smem_slot %[[B]][%[[CSLOT]]]
// LowerTrans: the same slot, read transposed.
// CHECK-NEXT:      %[[TBT:.*]] = nvgpu_async.smem_trans %[[TB]] : !nvgpu_async.smem_view<64x64xbf16> -> !nvgpu_async.smem_view<64x64xbf16, transposed>
// LowerRegisterConstant: a splat constant takes its fragment type.
// CHECK-NEXT:      %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// LowerDot: fence, wgmma, commit (InsertWgmmaWaits: wait before the release).
// CHECK-NEXT:      nvgpu_async.wgmma_fence
// CHECK-NEXT:      %[[D:.*]] = nvgpu_async.wgmma %[[TA]], %[[TBT]], %[[Z]] : {{.*}} -> tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:      nvgpu_async.wgmma_commit_group
// CHECK-NEXT:      nvgpu_async.wgmma_wait_group pending = 0
// LowerConsumed: one arrival per consumer warpgroup on `empty`.
// CHECK:           %[[RSLOT:.*]] = arith.remui
// CHECK-NEXT:      nvgpu_async.mbarrier_arrive warpgroup %[[EMPTY]][%[[RSLOT]]]
// CHECK-NEXT:      nvgpu_async.wgmma_wait_group pending = 0
// LowerStore through TMA: wait for the previous store, write the staging tile,
// fence it for the async proxy, one TMA store.
// CHECK-NEXT:      %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:      nvgpu_async.tma_store_wait pending = 0
// CHECK-NEXT:      nvgpu_async.consumer_barrier
// CHECK-NEXT:      nvgpu_async.smem_store %[[D]], %[[STAGE]][%[[ZERO]]]
// CHECK-NEXT:      nvgpu_async.fence_proxy_async
// CHECK-NEXT:      nvgpu_async.consumer_barrier
// CHECK-NEXT:      nvgpu_async.tma_store %[[STAGE]][%[[ZERO]]], %c[
// CHECK-NEXT:      nvgpu_async.tma_store_commit
// The consumer ends waiting for its MMAs and its TMA stores.
// CHECK-NEXT:      nvgpu_async.wgmma_wait_group pending = 0
// CHECK-NEXT:      nvgpu_async.tma_store_wait pending = 0
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
// CHECK-NOT:   aref.
// DIRECT-LABEL: func.func @ring(
// DIRECT-SAME:    %c: !nvgpu_async.global<?x?xf32>)
// DIRECT-NOT:     smem_store
// DIRECT:         nvgpu_async.store_global %{{.*}}, %c[

func.func @ring(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
                %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %r = aref.create : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
  aref.warp_specialize consumers = 1 producer {
    %i = arith.constant 0 : index
    %c0 = arith.constant 0 : index
    %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
    %ta = tile.load %a[%K, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%K, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    aref.put %r[%i], %ta, %tb : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
  } consumer {
    %i = arith.constant 0 : index
    %c0 = arith.constant 0 : index
    %ta, %tb = aref.get %r[%i] : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    %d = tile.dot %ta, %tbt, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    aref.consumed %r[%i] : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
    tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  }
  func.return
}

// -----

// A vector tile the consumer reads with plain shared loads: every consumer
// thread releases the slot (LoadSharedOperands loads it into the layout of the
// op reading it; RetypeTiles gives every register tile its fragment type); a
// 1-D tensor map has a unit outer axis, so its copy gets a leading 0
// coordinate; the consumer raises its register budget.
// CHECK-LABEL: func.func @threads(
// CHECK-SAME:    %v: !nvgpu_async.tensor_map<1x?xf32, box = [1, 64], swizzle = 0>
// CHECK-SAME:    %s: f32)
// CHECK:         nvgpu_async.mbarrier_init %{{.*}}, count = 2 : !nvgpu_async.mbarrier<1>
// CHECK:         nvgpu_async.mbarrier_init %[[VEMPTY:.*]], count = 256 : !nvgpu_async.mbarrier<1>
// CHECK:         nvgpu_async.role_dispatch consumers = 2 registers = [24, 240] producer {
// CHECK:           %[[LIFT:[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT:      nvgpu_async.tma_load %v[%[[LIFT]], %{{.*}}]
// CHECK:         } consumer {
// CHECK-NEXT:      nvgpu_async.setmaxnreg inc 240
// CHECK:           %[[TV:.*]] = nvgpu_async.smem_slot {{.*}} -> !nvgpu_async.smem_view<64xf32>
// CHECK:           %[[SC:.*]] = tile.splat %s : f32 -> tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>>
// CHECK-NEXT:      %[[LOADED:.*]] = nvgpu_async.smem_load %[[TV]] : !nvgpu_async.smem_view<64xf32> -> tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>>
// CHECK-NEXT:      %{{.*}} = arith.mulf %[[SC]], %[[LOADED]] : tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>>
// CHECK-NEXT:      %{{.*}} = tile.expand_dims {{.*}} -> tensor<1x64xf32, #nvgpu_async.frag<col, warpgroups = 2>>
// CHECK-NEXT:      %{{.*}} = tile.broadcast {{.*}} -> tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
// CHECK:           nvgpu_async.mbarrier_arrive thread %[[VEMPTY]]
// CHECK:           nvgpu_async.mbarrier_arrive warpgroup
// DIRECT-LABEL: func.func @threads(
// DIRECT:         nvgpu_async.store_global

func.func @threads(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %v: !tile.desc<?xf32, box = [64]>,
                   %c: !tile.desc<?x?xf32, box = [64, 64]>, %s: f32) attributes {tile.kernel} {
  %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
  %rv = aref.create : !aref.aref<[tensor<64xf32>], depth = 1>
  aref.warp_specialize consumers = 2 producer {
    %i = arith.constant 0 : index
    %c0 = arith.constant 0 : index
    %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %tv = tile.load %v[%c0] : !tile.desc<?xf32, box = [64]> -> tensor<64xf32>
    aref.put %rv[%i], %tv : !aref.aref<[tensor<64xf32>], depth = 1>
  } consumer {
    %i = arith.constant 0 : index
    %c0 = arith.constant 0 : index
    %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %tv = aref.get %rv[%i] : !aref.aref<[tensor<64xf32>], depth = 1>
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    %sc = tile.splat %s : f32 -> tensor<64xf32>
    %vs = arith.mulf %sc, %tv : tensor<64xf32>
    %row = tile.expand_dims %vs, axis = 0 : tensor<64xf32> -> tensor<1x64xf32>
    %bias = tile.broadcast %row : tensor<1x64xf32> -> tensor<64x64xf32>
    aref.consumed %rv[%i] : !aref.aref<[tensor<64xf32>], depth = 1>
    aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    tile.store %bias, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  }
  func.return
}

// -----

// Clusters of two: B is the same in both blocks (its coordinates do not depend
// on program_id(x)), so it is multicast and its slots released in both blocks
// (`empty` counts both blocks' warpgroups); cluster barriers after the init and
// before exit. A view the loop carries (B of the previous iteration) becomes a
// view-typed loop argument and result.
// CHECK-LABEL: func.func @carried(
// CHECK-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 42016, cluster = 2>
// CHECK:         nvgpu_async.mbarrier_init %[[EMPTY:.*]], count = 2 : !nvgpu_async.mbarrier<2>
// CHECK-NEXT:    nvgpu_async.fence_mbarrier_init
// CHECK-NEXT:    nvgpu_async.cta_barrier
// CHECK-NEXT:    nvgpu_async.cluster_barrier
// CHECK:           nvgpu_async.tma_load %a[{{.*}}] :
// CHECK-NEXT:      nvgpu_async.tma_load %b[{{.*}}] multicast(2) :
// CHECK:         } consumer {
// CHECK:           scf.for {{.*}} iter_args({{.*}}) -> (tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>, !nvgpu_async.smem_view<64x64xbf16>, index) {
// CHECK:             nvgpu_async.mbarrier_arrive warpgroup %[[EMPTY]][%{{.*}}] cluster(2)
// CHECK:             scf.yield {{.*}} : tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>, !nvgpu_async.smem_view<64x64xbf16>, index
// CHECK:           nvgpu_async.tma_store_commit
// CHECK-NEXT:      nvgpu_async.wgmma_wait_group pending = 0
// CHECK-NEXT:      nvgpu_async.tma_store_wait pending = 0
// CHECK-NEXT:    }
// CHECK-NEXT:    nvgpu_async.cluster_barrier
// CHECK-NEXT:    func.return

func.func @carried(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
                   %c: !tile.desc<?x?xbf16, box = [64, 64]>) attributes {tile.kernel, tile.cluster = 2 : i64} {
  %r = aref.create : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
  aref.warp_specialize consumers = 1 producer {
    %i0 = arith.constant 0 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c256 = arith.constant 256 : index
    %pid = tile.program_id x
    %n = scf.for %k = %c0 to %c256 step %c64 iter_args(%i = %i0) -> (index) {
      %ta = tile.load %a[%pid, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %r[%i], %ta, %tb : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
      %next = arith.addi %i, %c1 : index
      scf.yield %next : index
    }
  } consumer {
    %i0 = arith.constant 0 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    %ta0, %tb0 = aref.get %r[%i0] : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
    %acc, %last, %n = scf.for %k = %c1 to %c4 step %c1 iter_args(%acc_k = %z, %tb_k = %tb0, %i = %i0) -> (tensor<64x64xf32>, tensor<64x64xbf16>, index) {
      %next = arith.addi %i, %c1 : index
      %ta, %tb = aref.get %r[%next] : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
      %d = tile.dot %ta, %tb_k, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %r[%i] : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
      scf.yield %d, %tb, %next : tensor<64x64xf32>, tensor<64x64xbf16>, index
    }
    aref.consumed %r[%n] : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 2>
    %out = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
    tile.store %out, %c[%c0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  }
  func.return
}
