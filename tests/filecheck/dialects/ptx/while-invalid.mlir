// ptx.while's verifier: carried values, forwarded values, the after region's
// arguments and its yield agree in type; the condition is one predicate.
// RUN: TAWA_VERIFY_DIAG | filecheck %s

func.func @k() {
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %p = ptx.alu(%n, %n) {opcode = "setp.lt.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  // expected-error@+1 {{ptx.while: the condition forwards one value per result, typed alike}}
  %r = ptx.while (%i = %n : !ptx.reg<b32>) -> (!ptx.reg<f32>) {
    ptx.condition(%p : !ptx.reg<pred>) %i : !ptx.reg<b32>
  } do {
  ^bb0(%j: !ptx.reg<f32>):
    ptx.yield %n : !ptx.reg<b32>
  }
  func.return
}
// CHECK: error: ptx.while: the condition forwards one value per result, typed alike

// -----

func.func @k() {
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %p = ptx.alu(%n, %n) {opcode = "setp.lt.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  %two = ptx.alu(%n) {opcode = "mov.b32"} : (!ptx.reg<b32>) -> !ptx.reg<b32 x 2>
  // expected-error@+1 {{ptx.while: the after region yields one value per carried value, typed alike}}
  %r = ptx.while (%i = %n : !ptx.reg<b32>) -> (!ptx.reg<b32>) {
    ptx.condition(%p : !ptx.reg<pred>) %i : !ptx.reg<b32>
  } do {
  ^bb0(%j: !ptx.reg<b32>):
    ptx.yield %two : !ptx.reg<b32 x 2>
  }
  func.return
}
// CHECK: error: ptx.while: the after region yields one value per carried value, typed alike

// -----

func.func @k() {
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %p = ptx.alu(%n, %n) {opcode = "setp.lt.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  // expected-error@+1 {{ptx.while: the after region takes one value per result, typed alike}}
  %r = ptx.while (%i = %n : !ptx.reg<b32>) -> (!ptx.reg<b32>) {
    ptx.condition(%p : !ptx.reg<pred>) %i : !ptx.reg<b32>
  } do {
    ptx.yield %n : !ptx.reg<b32>
  }
  func.return
}
// CHECK: error: ptx.while: the after region takes one value per result, typed alike

// -----

func.func @k() {
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  ptx.while () -> () {
    // expected-error@+1 {{ptx.condition: the condition is one predicate}}
    ptx.condition(%n : !ptx.reg<b32>)
  } do {
    ptx.yield
  }
  func.return
}
// CHECK: error: ptx.condition: the condition is one predicate

// -----

func.func @k() {
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %p = ptx.alu(%n, %n) {opcode = "setp.lt.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  // expected-error@+1 {{ptx.while: the before region ends in ptx.condition}}
  ptx.while () -> () {
    ptx.yield
  } do {
    ptx.yield
  }
  func.return
}
// CHECK: error: ptx.while: the before region ends in ptx.condition
