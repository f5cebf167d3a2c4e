// cp.async and its mbarrier arrive: one cp.async per global address, each
// at the next `size` bytes of the shared address, with its source size (0:
// all zeros); .cg at 16 bytes (L2 only), .ca below; the arrive noinc or
// counted.
// RUN: TAWA_ROUNDTRIP
// RUN: tawa-opt %s -t ptx | filecheck %s --check-prefix=PTX

// CHECK-LABEL: func.func @k
// CHECK:         ptx.cp_async(%{{.*}}, %{{.*}}, %{{.*}}) {size = 16 : i64}
// CHECK:         ptx.cp_async_arrive(%{{.*}}) {offset = 0 : i64, noinc}
// CHECK-NEXT:    ptx.cp_async_arrive(%{{.*}}) {offset = 0 : i64}

// PTX:      mov.u32 %[[DST:r[0-9]+]], smem;
// PTX:      cp.async.cg.shared.global [%[[DST]]], [%rd{{[0-9]+}}], 16, %r{{[0-9]+}};
// PTX-NEXT: cp.async.ca.shared.global [%[[DST]]], [%[[S0:rd[0-9]+]]], 4, 4;
// PTX-NEXT: cp.async.ca.shared.global [%[[DST]]+4], [%[[S1:rd[0-9]+]]], 4, 0;
// PTX-NEXT: cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%[[DST]]];
// PTX-NEXT: cp.async.mbarrier.arrive.shared::cta.b64 [%[[DST]]];
func.func @k() attributes {tile.kernel, nvgpu_async.launch = #nvgpu_async.launch<threads = 128, smem = 1024, cluster = 1>, ptx.params = [#ptx.param_decl<"p_a" : u64>, #ptx.param_decl<"p_n" : u32>]} {
  %src = ptx.param() {param = "p_a"} : () -> !ptx.reg<b64>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %dst = ptx.special() {register = "smem"} : () -> !ptx.reg<b32>
  %steps = ptx.imm() {value = array<i64: 0, 4>} : () -> !ptx.imm<b64 x 2>
  %two = ptx.alu(%src, %steps) {opcode = "add.s64"} : (!ptx.reg<b64>, !ptx.imm<b64 x 2>) -> !ptx.reg<b64 x 2>
  %sizes = ptx.imm() {value = array<i64: 4, 0>} : () -> !ptx.imm<b32 x 2>
  ptx.cp_async(%dst, %src, %n) {size = 16 : i64} : (!ptx.reg<b32>, !ptx.reg<b64>, !ptx.reg<b32>) -> ()
  ptx.cp_async(%dst, %two, %sizes) {size = 4 : i64} : (!ptx.reg<b32>, !ptx.reg<b64 x 2>, !ptx.imm<b32 x 2>) -> ()
  ptx.cp_async_arrive(%dst) {offset = 0 : i64, noinc} : (!ptx.reg<b32>) -> ()
  ptx.cp_async_arrive(%dst) {offset = 0 : i64} : (!ptx.reg<b32>) -> ()
  func.return
}
