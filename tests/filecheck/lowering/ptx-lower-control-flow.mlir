// ptx-lower-control-flow: allocated loops and branches become labels and
// jumps in place, in the old printer's shape; labels count up in program order.
// RUN: tawa-opt %s --split-input-file -p ptx-lower-control-flow | filecheck %s

// A loop: the counter starts from its bound unless it is already there, the
// exit test takes a fresh predicate above every allocated one, the body's
// copies stay before the step, and the results are the carried registers.
// CHECK-LABEL: func.func @loop
// CHECK:         %[[IV:.*]] = ptx.alu(%c0) {opcode = "mov.u32"} : (!ptx.imm<b32>) -> !ptx.reg<b32 at 1>
// CHECK-NEXT:    ptx.label() {label = "L_loop_1"}
// CHECK-NEXT:    %[[EXIT:.*]] = ptx.alu(%[[IV]], %n) {opcode = "setp.ge.s32"} : (!ptx.reg<b32 at 1>, !ptx.reg<b32 at 0>) -> !ptx.reg<pred at 3>
// CHECK-NEXT:    ptx.bra() if %[[EXIT]] {target = "L_done_2"}
// CHECK-NEXT:    %x = ptx.alu(%[[IV]], %init) {opcode = "add.s32"}
// CHECK-NEXT:    %copy = ptx.alu(%x) {opcode = "mov.b32"}
// CHECK-NEXT:    %{{.*}} = ptx.alu(%[[IV]], %c1) {opcode = "add.sat.s32"} : (!ptx.reg<b32 at 1>, !ptx.imm<b32>) -> !ptx.reg<b32 at 1>
// CHECK-NEXT:    ptx.bra() {target = "L_loop_1"}
// CHECK-NEXT:    ptx.label() {label = "L_done_2"}
// CHECK-NEXT:    %after = ptx.alu(%init, %init) {opcode = "add.s32"}
// CHECK-NOT:     ptx.for
func.func @loop() attributes {tile.kernel} {
  %c0 = ptx.imm() {value = 0 : i64} : () -> !ptx.imm<b32>
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32 at 0>
  %p = ptx.alu(%n, %c1) {opcode = "setp.eq.u32"} : (!ptx.reg<b32 at 0>, !ptx.imm<b32>) -> !ptx.reg<pred at 2>
  %init = ptx.alu(%c1) {opcode = "mov.b32"} : (!ptx.imm<b32>) -> !ptx.reg<b32 at 2>
  %r = ptx.for %i = %c0 to %n step %c1 : (!ptx.imm<b32>, !ptx.reg<b32 at 0>, !ptx.imm<b32>) -> !ptx.reg<b32 at 1> iter_args(%a = %init : !ptx.reg<b32 at 2>) -> (!ptx.reg<b32 at 2>) {
    %x = ptx.alu(%i, %a) {opcode = "add.s32"} : (!ptx.reg<b32 at 1>, !ptx.reg<b32 at 2>) -> !ptx.reg<b32 at 3>
    %copy = ptx.alu(%x) {opcode = "mov.b32"} : (!ptx.reg<b32 at 3>) -> !ptx.reg<b32 at 2>
    ptx.yield %copy : !ptx.reg<b32 at 2>
  }
  %after = ptx.alu(%r, %r) {opcode = "add.s32"} : (!ptx.reg<b32 at 2>, !ptx.reg<b32 at 2>) -> !ptx.reg<b32 at 2>
  func.return
}

// -----

// A counter already in place needs no mov; a loop nested in a branch: outer
// labels first. A uniform branch jumps with bra.uni both ways; its results are
// what the then branch yields (the same registers as the else branch's).
// CHECK-LABEL: func.func @nested
// CHECK-NEXT:    %c1 = ptx.imm
// CHECK-NEXT:    %n = ptx.param
// CHECK-NEXT:    %p = ptx.alu
// CHECK-NEXT:    ptx.bra() if %p {target = "L_else_1", uniform, negated}
// CHECK-NEXT:    ptx.label() {label = "L_loop_3"}
// CHECK-NEXT:    %{{.*}} = ptx.alu(%n, %n) {opcode = "setp.ge.s32"} {{.*}} -> !ptx.reg<pred at 1>
// CHECK-NEXT:    ptx.bra() if %{{.*}} {target = "L_done_4"}
// CHECK-NEXT:    %{{.*}} = ptx.alu(%n, %c1) {opcode = "add.sat.s32"}
// CHECK-NEXT:    ptx.bra() {target = "L_loop_3"}
// CHECK-NEXT:    ptx.label() {label = "L_done_4"}
// CHECK-NEXT:    %t = ptx.alu(%n, %c1) {opcode = "add.s32"}
// CHECK-NEXT:    ptx.bra() {target = "L_endif_2", uniform}
// CHECK-NEXT:    ptx.label() {label = "L_else_1"}
// CHECK-NEXT:    %e = ptx.alu(%n, %c1) {opcode = "sub.s32"}
// CHECK-NEXT:    ptx.label() {label = "L_endif_2"}
// CHECK-NEXT:    %use = ptx.alu(%t, %t)
func.func @nested() attributes {tile.kernel} {
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32 at 0>
  %p = ptx.alu(%n, %c1) {opcode = "setp.eq.u32"} : (!ptx.reg<b32 at 0>, !ptx.imm<b32>) -> !ptx.reg<pred at 0>
  %r = ptx.if uniform %p : !ptx.reg<pred at 0> -> (!ptx.reg<b32 at 1>) {
    ptx.for %i = %n to %n step %c1 : (!ptx.reg<b32 at 0>, !ptx.reg<b32 at 0>, !ptx.imm<b32>) -> !ptx.reg<b32 at 0> {
    }
    %t = ptx.alu(%n, %c1) {opcode = "add.s32"} : (!ptx.reg<b32 at 0>, !ptx.imm<b32>) -> !ptx.reg<b32 at 1>
    ptx.yield %t : !ptx.reg<b32 at 1>
  } else {
    %e = ptx.alu(%n, %c1) {opcode = "sub.s32"} : (!ptx.reg<b32 at 0>, !ptx.imm<b32>) -> !ptx.reg<b32 at 1>
    ptx.yield %e : !ptx.reg<b32 at 1>
  }
  %use = ptx.alu(%r, %r) {opcode = "add.s32"} : (!ptx.reg<b32 at 1>, !ptx.reg<b32 at 1>) -> !ptx.reg<b32 at 1>
  func.return
}

// -----

// A branch whose else does nothing jumps straight to its end, named after the
// branch's label: the unit-rescale skip's shape.
// CHECK-LABEL: func.func @skip
// CHECK:         ptx.bra() if %p {target = "L_unit_scale_1", uniform, negated}
// CHECK-NEXT:    %m = ptx.alu(%a, %a) {opcode = "mul.f32"}
// CHECK-NEXT:    ptx.label() {label = "L_unit_scale_1"}
// CHECK-NEXT:    ptx.bra() if %p {target = "L_endif_2", negated}
// CHECK-NEXT:    ptx.bar
// CHECK-NEXT:    ptx.label() {label = "L_endif_2"}
// CHECK-NEXT:    %use = ptx.alu(%m, %m)
func.func @skip() attributes {tile.kernel} {
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32 at 0>
  %p = ptx.alu(%tid, %c1) {opcode = "setp.eq.u32"} : (!ptx.reg<b32 at 0>, !ptx.imm<b32>) -> !ptx.reg<pred at 0>
  %a = ptx.alu(%tid) {opcode = "cvt.rn.f32.s32"} : (!ptx.reg<b32 at 0>) -> !ptx.reg<f32 x 4 at 0>
  %r = ptx.if uniform %p : !ptx.reg<pred at 0> label "unit_scale" -> (!ptx.reg<f32 x 4 at 0>) {
    %m = ptx.alu(%a, %a) {opcode = "mul.f32"} : (!ptx.reg<f32 x 4 at 0>, !ptx.reg<f32 x 4 at 0>) -> !ptx.reg<f32 x 4 at 0>
    ptx.yield %m : !ptx.reg<f32 x 4 at 0>
  } else {
    ptx.yield %a : !ptx.reg<f32 x 4 at 0>
  }
  ptx.if %p : !ptx.reg<pred at 0> {
    ptx.bar(%c1) : (!ptx.imm<b32>) -> ()
  }
  %use = ptx.alu(%r, %r) {opcode = "add.f32"} : (!ptx.reg<f32 x 4 at 0>, !ptx.reg<f32 x 4 at 0>) -> !ptx.reg<f32 x 4 at 0>
  func.return
}

// -----

// A while loop: a head label, the before region with the condition's copies,
// a branch out where the condition does not hold (in the same registers as
// the body's, so the results are what the condition forwarded), the after
// region with the back edge's copies, and a jump back. A carried value the
// condition forwards as it is reads, as the carried values do, its initial
// value's registers.
// CHECK-LABEL: func.func @while_loop
// CHECK:         %b0 = ptx.alu(%m)
// CHECK-NEXT:    ptx.label() {label = "L_while_1"}
// CHECK-NEXT:    %p = ptx.alu(%a0, %b0) {opcode = "setp.lt.s32"}
// CHECK-NEXT:    %twice = ptx.alu(%a0) {opcode = "mov.b32"}
// CHECK-NEXT:    ptx.bra() if %p {target = "L_while_done_2", negated}
// CHECK-NEXT:    %tmp = ptx.alu(%b0) {opcode = "mov.b32"}
// CHECK-NEXT:    %tob = ptx.alu(%a0) {opcode = "mov.b32"}
// CHECK-NEXT:    %toa = ptx.alu(%tmp) {opcode = "mov.b32"}
// CHECK-NEXT:    ptx.bra() {target = "L_while_1", uniform}
// CHECK-NEXT:    ptx.label() {label = "L_while_done_2"}
// CHECK-NEXT:    %s = ptx.alu(%a0, %b0) {opcode = "add.s32"}
// CHECK-NEXT:    %s2 = ptx.alu(%s, %twice) {opcode = "add.s32"}
// CHECK-NOT:     ptx.while
func.func @while_loop() attributes {tile.kernel} {
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32 at 0>
  %m = ptx.param() {param = "p_m"} : () -> !ptx.reg<b32 at 1>
  %a0 = ptx.alu(%n) {opcode = "mov.b32"} : (!ptx.reg<b32 at 0>) -> !ptx.reg<b32 at 2>
  %b0 = ptx.alu(%m) {opcode = "mov.b32"} : (!ptx.reg<b32 at 1>) -> !ptx.reg<b32 at 3>
  %r0, %r1, %r2 = ptx.while (%a = %a0 : !ptx.reg<b32 at 2>, %b = %b0 : !ptx.reg<b32 at 3>) -> (!ptx.reg<b32 at 2>, !ptx.reg<b32 at 3>, !ptx.reg<b32 at 4>) {
    %p = ptx.alu(%a, %b) {opcode = "setp.lt.s32"} : (!ptx.reg<b32 at 2>, !ptx.reg<b32 at 3>) -> !ptx.reg<pred at 0>
    %twice = ptx.alu(%a) {opcode = "mov.b32"} : (!ptx.reg<b32 at 2>) -> !ptx.reg<b32 at 4>
    ptx.condition(%p : !ptx.reg<pred at 0>) %a, %b, %twice : !ptx.reg<b32 at 2>, !ptx.reg<b32 at 3>, !ptx.reg<b32 at 4>
  } do {
  ^bb0(%x: !ptx.reg<b32 at 2>, %y: !ptx.reg<b32 at 3>, %z: !ptx.reg<b32 at 4>):
    %tmp = ptx.alu(%y) {opcode = "mov.b32"} : (!ptx.reg<b32 at 3>) -> !ptx.reg<b32 at 5>
    %tob = ptx.alu(%x) {opcode = "mov.b32"} : (!ptx.reg<b32 at 2>) -> !ptx.reg<b32 at 3>
    %toa = ptx.alu(%tmp) {opcode = "mov.b32"} : (!ptx.reg<b32 at 5>) -> !ptx.reg<b32 at 2>
    ptx.yield %toa, %tob : !ptx.reg<b32 at 2>, !ptx.reg<b32 at 3>
  }
  %s = ptx.alu(%r0, %r1) {opcode = "add.s32"} : (!ptx.reg<b32 at 2>, !ptx.reg<b32 at 3>) -> !ptx.reg<b32 at 2>
  %s2 = ptx.alu(%s, %r2) {opcode = "add.s32"} : (!ptx.reg<b32 at 2>, !ptx.reg<b32 at 4>) -> !ptx.reg<b32 at 2>
  func.return
}
