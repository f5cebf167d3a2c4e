// -t ptx on thread-level IR: allocates, lowers control flow and prints the
// frame around the ops' own lines (header, .entry with the recorded
// parameters, launch bounds, one .reg line per class used, ret).
// RUN: tawa-opt %s -t ptx | filecheck %s
// RUN: tawa-opt %s -p ptx-allocate,ptx-lower-control-flow -t ptx | filecheck %s

// CHECK:      .version 8.0
// CHECK-NEXT: .target sm_90a
// CHECK-NEXT: .address_size 64
// CHECK-EMPTY:
// CHECK-NEXT: .extern .shared .align 1024 .b8 smem[];
// CHECK-EMPTY:
// CHECK-NEXT: .visible .entry k(
// CHECK-NEXT:     .param .align 64 .b8 p_a[128],
// CHECK-NEXT:     .param .u32 p_n
// CHECK-NEXT: )
// CHECK-NEXT: .maxntid 256, 1, 1
// CHECK-NEXT: .minnctapersm 1
// CHECK-NEXT: .reqnctapercluster 2, 1, 1
// CHECK-NEXT: {
// CHECK-NEXT:     .reg .f32 %f<4>;
// CHECK-NEXT:     .reg .pred %p<2>;
// CHECK-NEXT:     .reg .b32 %r<3>;
// CHECK-NEXT:     .reg .b64 %rd<1>;
// CHECK-NEXT:     mov.b64 %rd0, p_a;
// CHECK-NEXT:     cvta.param.u64 %rd0, %rd0;
// CHECK-NEXT:     ld.param.u32 %r0, [p_n];
// CHECK-NEXT:     mov.u32 %r1, %tid.x;
// CHECK-NEXT:     setp.eq.u32 %p0, %r1, 0;
// CHECK-NEXT:     mov.u32 %r2, smem;
// CHECK-NEXT:     @!%p0 bra L_endif_1;
// CHECK-NEXT:     mbarrier.init.shared::cta.b64 [%r2+8], 1;
// CHECK-NEXT: L_endif_1:
// CHECK-NEXT: L_wait_2:
// CHECK-NEXT:     mbarrier.try_wait.parity.shared::cta.b64 %p1, [%r2+8], 0;
// CHECK-NEXT:     @!%p1 bra L_wait_2;
// CHECK-NEXT:     griddepcontrol.launch_dependents;
// CHECK-NEXT:     griddepcontrol.wait;
// CHECK-NEXT:     cvt.rn.f32.s32 %f0, %r1;
// CHECK-NEXT:     cvt.rn.f32.s32 %f1, %r1;
// CHECK-NEXT:     cvt.rn.f32.s32 %f2, %r1;
// CHECK-NEXT:     cvt.rn.f32.s32 %f3, %r1;
// CHECK-NEXT:     ret;
// CHECK-NEXT: }
func.func @k() attributes {tile.kernel, nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 1024, cluster = 2>, ptx.params = [#ptx.param_decl<"p_a" : b8[128], align 64>, #ptx.param_decl<"p_n" : u32>]} {
  %map = ptx.param() {param = "p_a", generic} : () -> !ptx.reg<b64>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32>
  %c0 = ptx.imm() {value = 0 : i64} : () -> !ptx.imm<b32>
  %p = ptx.alu(%tid, %c0) {opcode = "setp.eq.u32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
  %bar = ptx.special() {register = "smem"} : () -> !ptx.reg<b32>
  ptx.if %p : !ptx.reg<pred> {
    ptx.mbarrier_init(%bar) {count = 1 : i64, offset = 8 : i64} : (!ptx.reg<b32>) -> ()
  }
  %r = ptx.mbarrier_wait(%bar, %c0) {offset = 8 : i64} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
  ptx.griddepcontrol() {kind = "launch_dependents"} : () -> ()
  ptx.griddepcontrol() {kind = "wait"} : () -> ()
  %f = ptx.alu(%tid) {opcode = "cvt.rn.f32.s32"} : (!ptx.reg<b32>) -> !ptx.reg<f32 x 4>
  func.return
}
