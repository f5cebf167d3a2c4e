// distribute-fragments, family 5 (wgmma): a tile-level wgmma (128x64 by 64x64,
// one warpgroup: two 64-row blocks, four k steps) is a chain of eight m64n64k16
// ptx.wgmma, each on its block's half of the accumulator bundle, each reading
// the previous one's result. Descriptors are built once from the tile address
// (bfe, cvt, or with the constant part: K-major for A and a transposed B,
// MN-major with LBO = the 64-column chunk for an untransposed B) and advanced
// per k step and row block. A zero accumulator is no operand: the first k step
// runs with scale-d false. A register A (the RS form) is four b32 of the packed
// 16-bit fragment per instruction.
// RUN: tawa-opt %s -p distribute-fragments | filecheck %s

// CHECK-LABEL: func.func @wgmma()
// CHECK-DAG:     %[[KMAJOR:.*]] = ptx.imm() {value = 4611686293305360384 : i64} : () -> !ptx.imm<b64>
// CHECK-DAG:     %[[MNMAJOR:.*]] = ptx.imm() {value = 4611686293338849280 : i64} : () -> !ptx.imm<b64>
// CHECK:         %[[FALSE:.*]] = ptx.alu(%[[TID:.*]], %[[TID]]) {opcode = "setp.ne.u32"}
// CHECK-NEXT:    %[[TRUE:.*]] = ptx.alu(%[[TID]], %[[TID]]) {opcode = "setp.eq.u32"}
// CHECK:         } else {
// CHECK:         %[[VA:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:    %[[VB:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:    ptx.wgmma_fence()
// CHECK-NEXT:    %[[B0:.*]] = ptx.alu(%[[VB]], %{{.*}}, %{{.*}}) {opcode = "bfe.u32"}
// CHECK-NEXT:    %[[B1:.*]] = ptx.alu(%[[B0]]) {opcode = "cvt.u64.u32"}
// CHECK-NEXT:    %[[BD:.*]] = ptx.alu(%[[B1]], %[[KMAJOR]]) {opcode = "or.b64"}
// CHECK-NEXT:    %[[BAND:.*]] = ptx.alu(%{{.*}}, %{{.*}}, %[[VA]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:    %[[A0:.*]] = ptx.alu(%[[BAND]], %{{.*}}, %{{.*}}) {opcode = "bfe.u32"}
// CHECK-NEXT:    %[[A1:.*]] = ptx.alu(%[[A0]]) {opcode = "cvt.u64.u32"}
// CHECK-NEXT:    %[[AD:.*]] = ptx.alu(%[[A1]], %[[KMAJOR]]) {opcode = "or.b64"}
// CHECK-NEXT:    %[[W0:.*]] = ptx.wgmma(%[[AD]], %[[BD]], %[[FALSE]]) {a_map = array<i32>, shape = "m64n64k16", dtype = "bf16", start = 0 : i64, transpose_b = 0 : i64} : (!ptx.reg<b64>, !ptx.reg<b64>, !ptx.reg<pred>) -> !ptx.reg<f32 x 64>
// the second 64-row block: A 64 rows (8192 bytes, 512 in 16-byte units) further
// CHECK-NEXT:    %[[AD1:.*]] = ptx.alu(%[[AD]], %{{.*}}) {opcode = "add.s64"}
// CHECK-NEXT:    %[[W1:.*]] = ptx.wgmma(%[[W0]], %[[AD1]], %[[BD]], %[[FALSE]]) {a_map = array<i32>, shape = "m64n64k16", dtype = "bf16", start = 32 : i64, transpose_b = 0 : i64}
// the next k step: 32 bytes further in both, scale-d true
// CHECK-NEXT:    %[[BK:.*]] = ptx.alu(%[[BD]], %{{.*}}) {opcode = "add.s64"}
// CHECK-NEXT:    %[[AK:.*]] = ptx.alu(%[[AD]], %{{.*}}) {opcode = "add.s64"}
// CHECK-NEXT:    %{{.*}} = ptx.wgmma(%[[W1]], %[[AK]], %[[BK]], %[[TRUE]]) {a_map = array<i32>, shape = "m64n64k16", dtype = "bf16", start = 0 : i64, transpose_b = 0 : i64}
// CHECK-COUNT-4: ptx.wgmma(
// CHECK:         %[[S:.*]] = ptx.wgmma(
// CHECK-NEXT:    ptx.wgmma_commit()
// CHECK-NEXT:    ptx.wgmma_wait() {pending = 0 : i64}
// CHECK-NEXT:    %[[P:.*]] = ptx.alu(%[[S]], %[[S]]) {opcode = "cvt.rn.bf16x2.f32"
// CHECK-NEXT:    ptx.wgmma_fence()
// CHECK-NEXT:    %[[V0:.*]] = ptx.alu(%[[VB]], %{{.*}}, %{{.*}}) {opcode = "bfe.u32"}
// CHECK-NEXT:    %[[V1:.*]] = ptx.alu(%[[V0]]) {opcode = "cvt.u64.u32"}
// CHECK-NEXT:    %[[VD:.*]] = ptx.alu(%[[V1]], %[[MNMAJOR]]) {opcode = "or.b64"}
// CHECK-NEXT:    %[[R0:.*]] = ptx.wgmma(%[[S]], %[[P]], %[[VD]], %[[TRUE]]) {a_map = array<i32: 0, 1, 2, 3>, shape = "m64n64k16", dtype = "bf16", start = 0 : i64, transpose_b = 1 : i64} : (!ptx.reg<f32 x 64>, !ptx.reg<b32 x 32>, !ptx.reg<b64>, !ptx.reg<pred>) -> !ptx.reg<f32 x 64>
// CHECK-NEXT:    %[[R1:.*]] = ptx.wgmma(%[[R0]], %[[P]], %[[VD]], %[[TRUE]]) {a_map = array<i32: 16, 17, 18, 19>, shape = "m64n64k16", dtype = "bf16", start = 32 : i64, transpose_b = 1 : i64}
// the next k step of an MN-major B: 16 rows of 128 bytes further
// CHECK-NEXT:    %[[VK:.*]] = ptx.alu(%[[VD]], %{{.*}}) {opcode = "add.s64"}
// CHECK-NEXT:    %{{.*}} = ptx.wgmma(%[[R1]], %[[P]], %[[VK]], %[[TRUE]]) {a_map = array<i32: 4, 5, 6, 7>,
func.func @wgmma() attributes {tile.kernel, nvgpu_async.abi = [], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 33792, cluster = 1>} {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x128x64xbf16>
  %b = nvgpu_async.smem_alloc offset = 16384 : !nvgpu_async.smem<1x64x64xbf16>
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %c0 = arith.constant 0 : index
    %va = nvgpu_async.smem_slot %a[%c0] : !nvgpu_async.smem<1x128x64xbf16> -> !nvgpu_async.smem_view<128x64xbf16>
    %vb = nvgpu_async.smem_slot %b[%c0] : !nvgpu_async.smem<1x64x64xbf16> -> !nvgpu_async.smem_view<64x64xbf16>
    %vbt = nvgpu_async.smem_trans %vb : !nvgpu_async.smem_view<64x64xbf16> -> !nvgpu_async.smem_view<64x64xbf16, transposed>
    %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    nvgpu_async.wgmma_fence
    %s = nvgpu_async.wgmma %va, %vbt, %zero : !nvgpu_async.smem_view<128x64xbf16>, !nvgpu_async.smem_view<64x64xbf16, transposed> -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    nvgpu_async.wgmma_commit_group
    nvgpu_async.wgmma_wait_group pending = 0
    %p = arith.truncf %s : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
    nvgpu_async.wgmma_fence
    %o = nvgpu_async.wgmma %p, %vb, %s : tensor<128x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>, !nvgpu_async.smem_view<64x64xbf16> -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    nvgpu_async.wgmma_commit_group
    nvgpu_async.wgmma_wait_group pending = 0
  }
  func.return
}
