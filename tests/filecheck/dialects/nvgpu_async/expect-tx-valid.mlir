// RUN: tawa-opt %s --split-input-file | filecheck %s

// Counts the verifier accepts: equal (a multicast load brings each block the
// whole tile, the peers' boxes included), and where they are not static (the
// loads in a nested region) the barrier simulator checks them at run time.

// CHECK-LABEL: func.func @equal
func.func @equal(%ma: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index, %s: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %b = nvgpu_async.smem_alloc offset = 32768 : !nvgpu_async.smem<2x128x64xbf16>
  %full = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_arrive_expect_tx %full[%s], bytes = 32768 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %ma[%i, %i], %a[%s], %full[%s] multicast(2) : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %ma[%i, %i], %b[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  func.return
}

// -----

// CHECK-LABEL: func.func @nested
func.func @nested(%ma: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index, %s: index, %c: i1) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %full = nvgpu_async.mbarrier_alloc offset = 32768 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_arrive_expect_tx %full[%s], bytes = 32768 : !nvgpu_async.mbarrier<2>
  scf.if %c {
    nvgpu_async.tma_load %ma[%i, %i], %a[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  }
  func.return
}
