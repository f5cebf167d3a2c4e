// ptx-skip-unit-scale guards an in-place rescale of a loop-carried bundle by a
// broadcast row: a vote on "some factor differs from 1.0", then a uniform
// branch around the multiplies. Allocated, the branch needs no copies, and the
// PTX is the old printer's: `@!%p bra.uni L_unit_scale_N; mul...; L_unit_scale_N:`.
// RUN: tawa-opt %s -p ptx-skip-unit-scale | filecheck %s
// RUN: tawa-opt %s -p ptx-skip-unit-scale,ptx-skip-unit-scale | filecheck %s
// RUN: tawa-opt %s -t ptx | filecheck %s --check-prefix=PTX

// CHECK-LABEL: func.func @rescale
// CHECK:         ptx.for
// CHECK:           %[[ONE:.*]] = ptx.imm() {value = 1.000000e+00 : f32}
// CHECK-NEXT:      %[[P0:.*]] = ptx.alu(%alpha, %[[ONE]]) {opcode = "setp.neu.f32", maps = [array<i32: 0>, array<i32>]}
// CHECK-NEXT:      %[[P1:.*]] = ptx.alu(%alpha, %[[ONE]], %[[P0]]) {opcode = "setp.neu.or.f32", maps = [array<i32: 1>, array<i32>, array<i32>]}
// CHECK-NEXT:      %[[ANY:.*]] = ptx.vote_any(%[[P1]])
// CHECK-NEXT:      %[[R:.*]] = ptx.if uniform %[[ANY]] : !ptx.reg<pred> label "unit_scale" -> (!ptx.reg<f32 x 16>) {
// CHECK-NEXT:        %[[M:.*]] = ptx.alu(%acc, %alpha) {opcode = "mul.f32"
// CHECK-NEXT:        ptx.yield %[[M]]
// CHECK-NEXT:      } else {
// CHECK-NEXT:        ptx.yield %acc
// CHECK-NEXT:      }
// CHECK-NEXT:      %next = ptx.alu(%[[R]], %s) {opcode = "add.f32"}
// Not in place (%b lives on), not a broadcast (four distinct factors for 16
// multiplies), not carried (after the loop): left alone.
// CHECK-NOT:     vote_any
// CHECK:         func.return

// PTX-LABEL: .visible .entry rescale(
// PTX:         vote.sync.any.pred [[MOVED:%p[0-9]+]], [[MOVED]], 0xffffffff;
// PTX-NEXT:    @![[MOVED]] bra.uni [[SKIP:L_unit_scale_[0-9]+]];
// PTX-NEXT:    mul.f32 [[ACC:%f[0-9]+]], [[ACC]], [[A0:%f[0-9]+]];
// PTX-COUNT-15: mul.f32
// PTX-NEXT:  [[SKIP]]:
// PTX-NEXT:    add.f32 [[ACC]], [[ACC]], %f{{[0-9]+}};
// PTX-NOT:     mov.f32 [[ACC]]
// PTX:         bra L_loop_
// PTX-NOT:     vote.sync
// PTX:         ret;
func.func @rescale() attributes {tile.kernel, nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>, ptx.params = [#ptx.param_decl<"p_n" : u32>]} {
  %c0 = ptx.imm() {value = 0 : i64} : () -> !ptx.imm<b32>
  %c64 = ptx.imm() {value = 64 : i64} : () -> !ptx.imm<b32>
  %zero = ptx.imm() {value = 0.0 : f32} : () -> !ptx.imm<f32>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %init = ptx.alu(%zero) {opcode = "mov.f32"} : (!ptx.imm<f32>) -> !ptx.reg<f32 x 16>
  %out:3 = ptx.for %i = %c0 to %n step %c64 : (!ptx.imm<b32>, !ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32> iter_args(%acc = %init : !ptx.reg<f32 x 16>, %b = %init : !ptx.reg<f32 x 16>, %c = %init : !ptx.reg<f32 x 16>) -> (!ptx.reg<f32 x 16>, !ptx.reg<f32 x 16>, !ptx.reg<f32 x 16>) {
    %s = ptx.alu(%i) {opcode = "cvt.rn.f32.s32"} : (!ptx.reg<b32>) -> !ptx.reg<f32 x 16>
    %alpha = ptx.alu(%s) {opcode = "ex2.approx.ftz.f32", maps = [array<i32: 0, 2>]} : (!ptx.reg<f32 x 16>) -> !ptx.reg<f32 x 2>
    %scaled = ptx.alu(%acc, %alpha) {opcode = "mul.f32", maps = [array<i32>, array<i32: 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1>]} : (!ptx.reg<f32 x 16>, !ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 16>
    %next = ptx.alu(%scaled, %s) {opcode = "add.f32"} : (!ptx.reg<f32 x 16>, !ptx.reg<f32 x 16>) -> !ptx.reg<f32 x 16>
    %b2 = ptx.alu(%b, %alpha) {opcode = "mul.f32", maps = [array<i32>, array<i32: 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1>]} : (!ptx.reg<f32 x 16>, !ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 16>
    %b3 = ptx.alu(%b2, %b) {opcode = "add.f32"} : (!ptx.reg<f32 x 16>, !ptx.reg<f32 x 16>) -> !ptx.reg<f32 x 16>
    %c2 = ptx.alu(%c, %s) {opcode = "mul.f32", maps = [array<i32>, array<i32: 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3>]} : (!ptx.reg<f32 x 16>, !ptx.reg<f32 x 16>) -> !ptx.reg<f32 x 16>
    ptx.yield %next, %b3, %c2 : !ptx.reg<f32 x 16>, !ptx.reg<f32 x 16>, !ptx.reg<f32 x 16>
  }
  %last = ptx.alu(%out#0, %out#1) {opcode = "mul.f32", maps = [array<i32>, array<i32: 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1>]} : (!ptx.reg<f32 x 16>, !ptx.reg<f32 x 16>) -> !ptx.reg<f32 x 16>
  func.return
}
