// ptx.while and ptx.condition round-trip in the custom and the generic syntax:
// carried bundles bound to their initial values, the condition's predicate and
// forwarded values, the after region's arguments; a loop carrying nothing.
// RUN: TAWA_ROUNDTRIP

// CHECK-LABEL: func.func @k
// CHECK:         %{{.*}}, %{{.*}} = ptx.while (%[[I:.*]] = %{{.*}} : !ptx.reg<b32>, %[[X:.*]] = %{{.*}} : !ptx.reg<f32 x 4>) -> (!ptx.reg<b32>, !ptx.reg<f32 x 4>) {
// CHECK-NEXT:      %[[P:.*]] = ptx.alu(%[[I]], %{{.*}}) {opcode = "setp.lt.s32"}
// CHECK-NEXT:      ptx.condition(%[[P]] : !ptx.reg<pred>) %[[I]], %[[X]] : !ptx.reg<b32>, !ptx.reg<f32 x 4>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%[[J:.*]]: !ptx.reg<b32>, %[[Y:.*]]: !ptx.reg<f32 x 4>):
// CHECK-NEXT:      %[[J1:.*]] = ptx.alu(%[[J]], %{{.*}}) {opcode = "add.s32"}
// CHECK-NEXT:      %[[Y1:.*]] = ptx.alu(%[[Y]], %[[Y]]) {opcode = "add.f32"}
// CHECK-NEXT:      ptx.yield %[[J1]], %[[Y1]] : !ptx.reg<b32>, !ptx.reg<f32 x 4>
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.while () -> () {
// CHECK-NEXT:      %{{.*}} = ptx.alu
// CHECK-NEXT:      ptx.condition(%{{.*}} : !ptx.reg<pred>)
// CHECK-NEXT:    } do {
// CHECK-NEXT:      ptx.yield
// CHECK-NEXT:    }
func.func @k() {
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %f = ptx.imm() {value = 1.0 : f32} : () -> !ptx.imm<f32>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %one = ptx.alu(%c1) {opcode = "mov.b32"} : (!ptx.imm<b32>) -> !ptx.reg<b32>
  %ones = ptx.alu(%f) {opcode = "mov.f32"} : (!ptx.imm<f32>) -> !ptx.reg<f32 x 4>
  %r, %s = ptx.while (%i = %one : !ptx.reg<b32>, %x = %ones : !ptx.reg<f32 x 4>) -> (!ptx.reg<b32>, !ptx.reg<f32 x 4>) {
    %p = ptx.alu(%i, %n) {opcode = "setp.lt.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
    ptx.condition(%p : !ptx.reg<pred>) %i, %x : !ptx.reg<b32>, !ptx.reg<f32 x 4>
  } do {
  ^bb0(%j: !ptx.reg<b32>, %y: !ptx.reg<f32 x 4>):
    %j1 = ptx.alu(%j, %c1) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32>
    %y1 = ptx.alu(%y, %y) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
    ptx.yield %j1, %y1 : !ptx.reg<b32>, !ptx.reg<f32 x 4>
  }
  ptx.while () -> () {
    %q = ptx.alu(%n, %c1) {opcode = "setp.lt.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
    ptx.condition(%q : !ptx.reg<pred>)
  } do {
    ptx.yield
  }
  func.return
}
