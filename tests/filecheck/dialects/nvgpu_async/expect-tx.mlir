// RUN: TAWA_VERIFY_DIAG | filecheck %s

// An expect_tx arms its barrier's phase with the bytes the TMA loads completing
// on it bring; where the loads sit in the same block, after it, the verifier
// adds them up: too many armed bytes hang the waiters, too few let them read
// tiles still in flight. Each message names both numbers, at the expect_tx.

func.func @too_many(%ma: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index, %s: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %full = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_arrive_expect_tx %full[%s], bytes = 32768 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %ma[%i, %i], %a[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: expect-tx.mlir:11:3: error: nvgpu_async.mbarrier_arrive_expect_tx: arms 32768 bytes, but the TMA loads that complete on %full[%s] after it in this block bring 16384 (1 tile: 128x64xbf16): the phase never completes and its waiters hang

// -----

func.func @too_few(%ma: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index, %s: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %b = nvgpu_async.smem_alloc offset = 32768 : !nvgpu_async.smem<2x128x64xbf16>
  %full = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_arrive_expect_tx %full[%s], bytes = 16384 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %ma[%i, %i], %a[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %ma[%i, %i], %b[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: expect-tx.mlir:23:3: error: nvgpu_async.mbarrier_arrive_expect_tx: arms 16384 bytes, but the TMA loads that complete on %full[%s] after it in this block bring 32768 (2 tiles: 128x64xbf16, 128x64xbf16): the phase completes before the copies land and its waiters read unfinished tiles

// -----

// Each expect_tx takes the loads up to the next one on the same barrier: the
// second arms one tile, and gets two.
func.func @second_phase(%ma: !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [128, 128], swizzle = 128>, %i: index, %s: index, %t: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x128xf8E4M3FN>
  %full = nvgpu_async.mbarrier_alloc offset = 32768 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_arrive_expect_tx %full[%s], bytes = 16384 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %ma[%i, %i], %a[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [128, 128], swizzle = 128>, !nvgpu_async.smem<2x128x128xf8E4M3FN>, !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %ma[%i, %i], %a[%t], %full[%t] : !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [128, 128], swizzle = 128>, !nvgpu_async.smem<2x128x128xf8E4M3FN>, !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_arrive_expect_tx %full[%s], bytes = 16384 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %ma[%i, %i], %a[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [128, 128], swizzle = 128>, !nvgpu_async.smem<2x128x128xf8E4M3FN>, !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %ma[%i, %i], %a[%s], %full[%s] : !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [128, 128], swizzle = 128>, !nvgpu_async.smem<2x128x128xf8E4M3FN>, !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: expect-tx.mlir:40:3: error: nvgpu_async.mbarrier_arrive_expect_tx: arms 16384 bytes, but the TMA loads that complete on %full[%s] after it in this block bring 32768 (2 tiles: 128x128xf8E4M3FN, 128x128xf8E4M3FN)
