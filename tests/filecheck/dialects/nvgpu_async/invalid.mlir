// RUN: TAWA_VERIFY_DIAG | filecheck %s

func.func @k() {
  %a = nvgpu_async.smem_alloc offset = 512 : !nvgpu_async.smem<2x128x64xbf16>
  func.return
}
// CHECK: error: nvgpu_async.smem_alloc offset 512 is not 1024-byte aligned (128-byte swizzle needs it)

// -----

func.func @k() {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<8x128x128xbf16>
  func.return
}
// CHECK: error: nvgpu_async.smem_alloc ends at byte 262144, past the 232448 bytes of shared memory a block can have

// -----

func.func @k() {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<0x128x64xbf16>
  func.return
}
// CHECK: shared-memory ring depth must be >= 1, not 0

// -----

func.func @k() {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x104xbf16>
  func.return
}
// CHECK: a 104-column tile does not split into 64-column swizzle chunks

// -----

func.func @k() {
  %b = nvgpu_async.mbarrier_alloc offset = 4 : !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: error: nvgpu_async.mbarrier_alloc offset 4 is not 8-byte aligned

// -----

func.func @k() {
  %b = nvgpu_async.mbarrier_alloc offset = 8 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_init %b, count = 0 : !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: error: nvgpu_async.mbarrier_init count must be >= 1, got 0

// -----

func.func @k(%i: index) {
  %b = nvgpu_async.mbarrier_alloc offset = 8 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_arrive_expect_tx %b[%i], bytes = 0 : !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: error: nvgpu_async.mbarrier_arrive_expect_tx needs a positive byte count, got 0

// -----

func.func @k(%m: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 128], swizzle = 128>) {
  func.return
}
// CHECK: tensor map box inner extent is 256 bytes, wider than its 128-byte swizzle

// -----

func.func @k(%m: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 96>) {
  func.return
}
// CHECK: swizzle must be 0, 32, 64 or 128 bytes, not 96

// -----

func.func @k(%m: !nvgpu_async.tensor_map<?x?xbf16, box = [64], swizzle = 128>) {
  func.return
}
// CHECK: tensor map box rank 1 differs from tensor rank 2

// -----

func.func @k(%m: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x64x64xbf16>
  %b = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %m[%i, %i], %a[%i], %b[%i] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x64x64xbf16>, !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: error: nvgpu_async.tma_load: a 64x64 tile is not a row of 128x64 boxes

// -----

func.func @k(%m: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xf16>
  %b = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %m[%i, %i], %a[%i], %b[%i] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xf16>, !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: error: nvgpu_async.tma_load: tensor map of bf16 and buffer of f16

// -----

func.func @k(%m: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %b = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %m[%i], %a[%i], %b[%i] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: error: nvgpu_async.tma_load needs 2 coordinates, got 1

// -----

func.func @k(%a: !nvgpu_async.smem_view<128x64xbf16>, %b: !nvgpu_async.smem_view<32x128xbf16>, %acc: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : !nvgpu_async.smem_view<128x64xbf16>, !nvgpu_async.smem_view<32x128xbf16> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.wgmma shapes do not chain: 128x64 @ 32x128 -> 128x128

// -----

func.func @k(%a: !nvgpu_async.smem_view<96x64xbf16>, %b: !nvgpu_async.smem_view<64x128xbf16>, %acc: tensor<96x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : !nvgpu_async.smem_view<96x64xbf16>, !nvgpu_async.smem_view<64x128xbf16> -> tensor<96x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.wgmma M = 96 is not a multiple of 64 per warpgroup (1)

// -----

func.func @k(%a: !nvgpu_async.smem_view<128x64xbf16>, %b: !nvgpu_async.smem_view<64x512xbf16>, %acc: tensor<128x512xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : !nvgpu_async.smem_view<128x64xbf16>, !nvgpu_async.smem_view<64x512xbf16> -> tensor<128x512xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.wgmma N = 512 must be a multiple of 8 in [8, 256]

// -----

func.func @k(%a: !nvgpu_async.smem_view<128x64xbf16>, %b: !nvgpu_async.smem_view<64x128xbf16>, %acc: tensor<128x128xf32>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : !nvgpu_async.smem_view<128x64xbf16>, !nvgpu_async.smem_view<64x128xbf16> -> tensor<128x128xf32>
  func.return
}
// CHECK: error: nvgpu_async.wgmma accumulator must be an f32 fragment in the acc layout

// -----

func.func @k(%a: !nvgpu_async.smem_view<128x64xbf16>, %b: !nvgpu_async.smem_view<64x128xf16>, %acc: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : !nvgpu_async.smem_view<128x64xbf16>, !nvgpu_async.smem_view<64x128xf16> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.wgmma input element types bf16 and f16 do not mix: both bf16, both f16, or both 8-bit floats

// -----

// 8-bit operands: wgmma reads them only K-major (B stored N x K: a transposed view)

func.func @k(%a: !nvgpu_async.smem_view<128x64xf8E4M3FN>, %b: !nvgpu_async.smem_view<64x128xf8E5M2>, %acc: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : !nvgpu_async.smem_view<128x64xf8E4M3FN>, !nvgpu_async.smem_view<64x128xf8E5M2> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.wgmma: its f8E5M2 B operand is stored K x N (MN-major): wgmma reads 8-bit operands only K-major; store B as N x K and transpose the loaded tile (tile.trans)

// -----

func.func @k(%a: !nvgpu_async.smem_view<128x64xf8E4M3FN, transposed>, %b: !nvgpu_async.smem_view<64x128xf8E4M3FN, transposed>, %acc: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : !nvgpu_async.smem_view<128x64xf8E4M3FN, transposed>, !nvgpu_async.smem_view<64x128xf8E4M3FN, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.wgmma: its f8E4M3FN A operand is stored K x M (MN-major): wgmma reads 8-bit operands only K-major; store A as M x K

// -----

// one 8-bit wgmma covers k32

func.func @k(%a: !nvgpu_async.smem_view<128x48xf8E4M3FN>, %b: !nvgpu_async.smem_view<48x128xf8E4M3FN, transposed>, %acc: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : !nvgpu_async.smem_view<128x48xf8E4M3FN>, !nvgpu_async.smem_view<48x128xf8E4M3FN, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.wgmma K = 48 is not a multiple of 32 (one instruction's K for f8E4M3FN)

// -----

// a 16-bit and an 8-bit input never mix

func.func @k(%a: !nvgpu_async.smem_view<128x64xbf16>, %b: !nvgpu_async.smem_view<64x128xf8E4M3FN, transposed>, %acc: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : !nvgpu_async.smem_view<128x64xbf16>, !nvgpu_async.smem_view<64x128xf8E4M3FN, transposed> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.wgmma input element types bf16 and f8E4M3FN do not mix: both bf16, both f16, or both 8-bit floats

// -----

func.func @k(%a: tensor<128x64xbf16>, %b: !nvgpu_async.smem_view<64x128xbf16>, %acc: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %d = nvgpu_async.wgmma %a, %b, %acc : tensor<128x64xbf16>, !nvgpu_async.smem_view<64x128xbf16> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.wgmma lhs must be a shared-memory view or a register fragment

// -----

func.func @k() {
  nvgpu_async.wgmma_wait_group pending = 9
  func.return
}
// CHECK: error: nvgpu_async.wgmma_wait_group takes 0 to 7 pending groups, not 9

// -----

func.func @k() {
  nvgpu_async.setmaxnreg inc 233
  func.return
}
// CHECK: error: nvgpu_async.setmaxnreg 233: the budget must be a multiple of 8 in [24, 256]

// -----

func.func @k() {
  nvgpu_async.role_dispatch consumers = 2 registers = [40, 248] producer {
  } consumer {
  }
  func.return
}
// CHECK: error: nvgpu_async.role_dispatch: budgets 40 + 2 x 248 registers per thread need 68608 registers; an SM has 65536

// -----

func.func @k(%v: !nvgpu_async.smem_view<128x64xbf16>) {
  %t = nvgpu_async.smem_trans %v : !nvgpu_async.smem_view<128x64xbf16> -> !nvgpu_async.smem_view<64x128xbf16>
  func.return
}
// CHECK: error: nvgpu_async.smem_trans of !nvgpu_async.smem_view<128x64xbf16> cannot give !nvgpu_async.smem_view<64x128xbf16>

// -----

func.func @k(%v: !nvgpu_async.smem_view<128x64xbf16>) {
  %t = nvgpu_async.smem_load %v : !nvgpu_async.smem_view<128x64xbf16> -> tensor<128x64xbf16>
  func.return
}
// CHECK: error: nvgpu_async.smem_load must give a register fragment

// -----

func.func @k(%t: tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>, %g: !nvgpu_async.global<?x?xf32>, %i: index) {
  nvgpu_async.store_global %t, %g[%i, %i] : tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.global<?x?xf32>
  func.return
}
// CHECK: error: nvgpu_async.store_global of bf16 into a tensor of f32

// -----

func.func @k(%t: tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 4>>) {
  func.return
}
// CHECK: #nvgpu_async.frag spans 1 to 3 warpgroups, not 4

// -----

func.func @k(%t: tensor<128x64xf32, #nvgpu_async.frag<diag, warpgroups = 1>>) {
  func.return
}
// CHECK: unknown fragment kind 'diag', expected one of acc, row, col

// -----

func.func @k() {
  nvgpu_async.role_dispatch consumers = 2 producer {
    nvgpu_async.mma_turn_begin
  } consumer {
  }
  func.return
}
// CHECK: error: nvgpu_async.mma_turn_begin must be in the consumer region of a role_dispatch

// -----

func.func @k() {
  nvgpu_async.mma_turn_end
  func.return
}
// CHECK: error: nvgpu_async.mma_turn_end must be in the consumer region of a role_dispatch

// -----

func.func @k() {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    nvgpu_async.mma_turn_init
  }
  func.return
}
// CHECK: error: nvgpu_async.mma_turn_init: taking turns needs two or more consumer warpgroups

// -----

func.func @k(%m: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %b = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %m[%i, %i], %a[%i], %b[%i] multicast(3) : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x64xbf16>, !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: error: nvgpu_async.tma_load: a cluster has a power of two up to 8 blocks, got 3

// -----

func.func @k(%i: index) {
  %b = nvgpu_async.mbarrier_alloc offset = 0 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_arrive thread %b[%i] cluster(2) : !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: error: nvgpu_async.mbarrier_arrive: arrivals in every block of a cluster are made once per warpgroup, not per thread

// -----

// A 64x64 e4m3 tile has 64-byte rows: its slots are 64-byte swizzled, and a
// 128-byte swizzled map would write another layout than wgmma reads.
func.func @k(%m: !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [64, 64], swizzle = 128>, %i: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x64x64xf8E4M3FN>
  %b = nvgpu_async.mbarrier_alloc offset = 8192 : !nvgpu_async.mbarrier<2>
  nvgpu_async.tma_load %m[%i, %i], %a[%i], %b[%i] : !nvgpu_async.tensor_map<?x?xf8E4M3FN, box = [64, 64], swizzle = 128>, !nvgpu_async.smem<2x64x64xf8E4M3FN>, !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: error: nvgpu_async.tma_load: the tensor map swizzles 128 bytes but the 64x64xf8E4M3FN slots are laid out 64-byte swizzled

// -----

func.func @k(%v: !nvgpu_async.smem_view<4xf32>) {
  %x = nvgpu_async.smem_extract %v[0, 0] : !nvgpu_async.smem_view<4xf32>
  func.return
}
// CHECK: error: nvgpu_async.smem_extract position [0, 0] is not an element of a 4 tile

// -----

func.func @k(%s: tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>) {
  %scratch = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x256xf32>
  %m = nvgpu_async.column_reduce sum %s, %scratch : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem<1x256xf32> -> tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>>
  func.return
}
// CHECK: error: nvgpu_async.column_reduce: the scratch !nvgpu_async.smem<1x256xf32> holds fewer than the 512 32-bit partials of its warps

// -----

func.func @k(%s: tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>) {
  %scratch = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x512xf32>
  %m = nvgpu_async.column_reduce sum %s, %scratch : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem<1x512xf32> -> tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 2>>
  func.return
}
// CHECK: error: nvgpu_async.column_reduce reduces an accumulator-layout tile into a column tile of the same warpgroups

// -----

func.func @k(%s: tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>) {
  %scratch = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x512xf32>
  %m = nvgpu_async.column_reduce sum %s, %scratch : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem<1x512xf32> -> tensor<128xf32, #nvgpu_async.frag<col, warpgroups = 2>>
  func.return
}
// CHECK: error: nvgpu_async.column_reduce of tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>> gives a vector of its 64 columns, not tensor<128xf32, #nvgpu_async.frag<col, warpgroups = 2>>

// -----

func.func @k(%s: tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>) {
  %scratch = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x512xf32>
  %m = nvgpu_async.column_reduce sum %s, %scratch : tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem<1x512xf32> -> tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>>
  func.return
}
// CHECK: error: nvgpu_async.column_reduce: 64 rows are not whole 64-row blocks of 2 warpgroups

// -----

func.func @k(%s: tensor<64x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>) {
  %scratch = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x256xf32>
  %m = nvgpu_async.column_reduce sum %s, %scratch : tensor<64x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>, !nvgpu_async.smem<1x256xf32> -> tensor<64xbf16, #nvgpu_async.frag<col, warpgroups = 1>>
  func.return
}
// CHECK: error: nvgpu_async.column_reduce reduces f32 or i32 tiles

// -----

func.func @k(%g: !nvgpu_async.global<?x?x?xbf16>, %i: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  nvgpu_async.thread_load %g[%i, %i, %i], %a[%i] : !nvgpu_async.global<?x?x?xbf16>, !nvgpu_async.smem<2x128x64xbf16>
  func.return
}
// CHECK: error: nvgpu_async.thread_load copies a matrix tile of a rank-2 tensor, not a 128x64 tile of a rank-3 one

// -----

func.func @k(%g: !nvgpu_async.global<?x?xf16>, %i: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  nvgpu_async.thread_load %g[%i, %i], %a[%i] : !nvgpu_async.global<?x?xf16>, !nvgpu_async.smem<2x128x64xbf16>
  func.return
}
// CHECK: error: nvgpu_async.thread_load: a tensor of f16 and a buffer of bf16

// -----

func.func @k(%g: !nvgpu_async.global<?x?xbf16>, %i: index) {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  nvgpu_async.thread_load %g[%i], %a[%i] : !nvgpu_async.global<?x?xbf16>, !nvgpu_async.smem<2x128x64xbf16>
  func.return
}
// CHECK: error: nvgpu_async.thread_load needs 2 coordinates, got 1

// -----

func.func @k(%i: index) {
  %s = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x128x64xbf16>
  %b = nvgpu_async.smem_alloc offset = 16384 : !nvgpu_async.smem<2x64x128xbf16>
  nvgpu_async.transpose_copy %s[%i], %b[%i] : !nvgpu_async.smem<1x128x64xbf16>, !nvgpu_async.smem<2x64x128xbf16>
  func.return
}
// CHECK: error: nvgpu_async.transpose_copy moves 8-bit tiles of one type, not bf16 into bf16

// -----

func.func @k(%i: index) {
  %s = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x128x64xf8E4M3FN>
  %b = nvgpu_async.smem_alloc offset = 8192 : !nvgpu_async.smem<2x128x64xf8E4M3FN>
  nvgpu_async.transpose_copy %s[%i], %b[%i] : !nvgpu_async.smem<1x128x64xf8E4M3FN>, !nvgpu_async.smem<2x128x64xf8E4M3FN>
  func.return
}
// CHECK: error: nvgpu_async.transpose_copy: a 128x64 buffer does not hold the transpose of a 128x64 tile

// -----

func.func @k(%i: index) {
  %s = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x16x128xf8E4M3FN>
  %b = nvgpu_async.smem_alloc offset = 2048 : !nvgpu_async.smem<2x128x16xf8E4M3FN>
  nvgpu_async.transpose_copy %s[%i], %b[%i] : !nvgpu_async.smem<1x16x128xf8E4M3FN>, !nvgpu_async.smem<2x128x16xf8E4M3FN>
  func.return
}
// CHECK: error: nvgpu_async.transpose_copy: a 16x128 tile; the copy takes rows in multiples of 32 and columns in multiples of 16
