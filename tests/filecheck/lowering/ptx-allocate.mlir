// ptx-allocate names every register bundle in its type and makes the phi
// copies explicit; values share registers only where liveness allows.
// RUN: tawa-opt %s --split-input-file -p ptx-allocate | filecheck %s

// An elementwise chain updates a loop-carried bundle in place: the product and
// the sum take the registers of the operand that dies at them, so the value
// yielded is already in the carried registers (no copy at the loop's end). The
// initial value, a mov dead after the loop starts, is built in place too;
// the loop's result is the same registers. An operand read through a map, or
// still live, is not overwritten; a mov always writes registers of its own.
// CHECK-LABEL: func.func @chain
// CHECK:         %init = ptx.alu(%zero) {opcode = "mov.f32"} : (!ptx.imm<f32>) -> !ptx.reg<f32 x 4 at [[ACC:[0-9]+]]>
// CHECK-NEXT:    %{{.*}} = ptx.alu(%c0) {opcode = "mov.u32"} : (!ptx.imm<b32>) -> !ptx.reg<b32 at [[I:[0-9]+]]>
// CHECK-NEXT:    %acc = ptx.for %i = %{{.*}} to %n step %c64 : (!ptx.reg<b32 at [[I]]>, {{.*}}) -> !ptx.reg<b32 at [[I]]> iter_args(%a = %init : !ptx.reg<f32 x 4 at [[ACC]]>) -> (!ptx.reg<f32 x 4 at [[ACC]]>) {
// CHECK-NEXT:      %x = {{.*}} -> !ptx.reg<f32 x 4 at [[X:[0-9]+]]>
// CHECK-NEXT:      %row = {{.*}} -> !ptx.reg<f32 x 4 at [[ROW:[0-9]+]]>
// CHECK-NEXT:      %m = ptx.alu(%a, %row) {{.*}} -> !ptx.reg<f32 x 4 at [[ACC]]>
// CHECK-NEXT:      %s = ptx.alu(%m, %x) {{.*}} -> !ptx.reg<f32 x 4 at [[ACC]]>
// CHECK-NEXT:      %again = ptx.alu(%x) {opcode = "mov.f32"} {{.*}} -> !ptx.reg<f32 x 4 at [[AGAIN:[0-9]+]]>
// CHECK-NEXT:      ptx.yield %s : !ptx.reg<f32 x 4 at [[ACC]]>
// CHECK-NEXT:    }
// CHECK-NEXT:    %out = ptx.alu(%acc, %acc) {{.*}} -> !ptx.reg<f32 x 4 at [[ACC]]>
func.func @chain() attributes {tile.kernel} {
  %c0 = ptx.imm() {value = 0 : i64} : () -> !ptx.imm<b32>
  %c64 = ptx.imm() {value = 64 : i64} : () -> !ptx.imm<b32>
  %zero = ptx.imm() {value = 0.0 : f32} : () -> !ptx.imm<f32>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %init = ptx.alu(%zero) {opcode = "mov.f32"} : (!ptx.imm<f32>) -> !ptx.reg<f32 x 4>
  %acc = ptx.for %i = %c0 to %n step %c64 : (!ptx.imm<b32>, !ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32> iter_args(%a = %init : !ptx.reg<f32 x 4>) -> (!ptx.reg<f32 x 4>) {
    %x = ptx.alu(%i) {opcode = "cvt.rn.f32.s32"} : (!ptx.reg<b32>) -> !ptx.reg<f32 x 4>
    %row = ptx.alu(%x) {opcode = "ex2.approx.ftz.f32", maps = [array<i32: 0, 0, 1, 1>]} : (!ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
    %m = ptx.alu(%a, %row) {opcode = "mul.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
    %s = ptx.alu(%m, %x) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
    %again = ptx.alu(%x) {opcode = "mov.f32"} : (!ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
    ptx.yield %s : !ptx.reg<f32 x 4>
  }
  %out = ptx.alu(%acc, %acc) {opcode = "mul.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
  func.return
}

// -----

// A wgmma updates its accumulator in place: a dying accumulator is reused, one
// still live afterwards is copied first. The first MMA of a chain (no
// accumulator) writes registers of its own.
// CHECK-LABEL: func.func @wgmma
// CHECK:         %d0 = ptx.wgmma(%desc, %desc, %f) {{.*}} -> !ptx.reg<f32 x 64 at [[D:[0-9]+]]>
// CHECK-NEXT:    %d1 = ptx.wgmma(%d0, %desc, %desc, %t) {{.*}} -> !ptx.reg<f32 x 64 at [[D]]>
// CHECK-NEXT:    %[[COPY:.*]] = ptx.alu(%d1) {opcode = "mov.f32"} : (!ptx.reg<f32 x 64 at [[D]]>) -> !ptx.reg<f32 x 64 at [[C:[0-9]+]]>
// CHECK-NEXT:    %d2 = ptx.wgmma(%[[COPY]], %desc, %desc, %t) {{.*}} -> !ptx.reg<f32 x 64 at [[C]]>
// CHECK-NEXT:    %keep = ptx.alu(%d1, %d2) {{.*}} -> !ptx.reg<f32 x 64 at [[D]]>
func.func @wgmma() attributes {tile.kernel} {
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32>
  %desc = ptx.alu(%tid) {opcode = "cvt.u64.u32"} : (!ptx.reg<b32>) -> !ptx.reg<b64>
  %f = ptx.alu(%tid, %tid) {opcode = "setp.ne.u32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  %t = ptx.alu(%tid, %tid) {opcode = "setp.eq.u32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
  %d0 = ptx.wgmma(%desc, %desc, %f) {a_map = array<i32>, shape = "m64n128k16", dtype = "bf16", start = 0 : i64, transpose_b = 0 : i64} : (!ptx.reg<b64>, !ptx.reg<b64>, !ptx.reg<pred>) -> !ptx.reg<f32 x 64>
  %d1 = ptx.wgmma(%d0, %desc, %desc, %t) {a_map = array<i32>, shape = "m64n128k16", dtype = "bf16", start = 0 : i64, transpose_b = 0 : i64} : (!ptx.reg<f32 x 64>, !ptx.reg<b64>, !ptx.reg<b64>, !ptx.reg<pred>) -> !ptx.reg<f32 x 64>
  %d2 = ptx.wgmma(%d1, %desc, %desc, %t) {a_map = array<i32>, shape = "m64n128k16", dtype = "bf16", start = 0 : i64, transpose_b = 0 : i64} : (!ptx.reg<f32 x 64>, !ptx.reg<b64>, !ptx.reg<b64>, !ptx.reg<pred>) -> !ptx.reg<f32 x 64>
  %keep = ptx.alu(%d1, %d2) {opcode = "add.f32"} : (!ptx.reg<f32 x 64>, !ptx.reg<f32 x 64>) -> !ptx.reg<f32 x 64>
  func.return
}

// -----

// Loop entry and end are parallel copies. An initial value is built in the
// carried registers only when it is a mov made for the loop that dies there
// (%u for %y); others are copied, the counter first, as the old printer did:
// %tid lives on, %u already went to %y, %v is not a mov. Carried values that
// swap go through a temporary; a value from before the loop, live across it,
// is copied in.
// CHECK-LABEL: func.func @copies
// CHECK:         %tid = {{.*}} -> !ptx.reg<b32 at [[TID:[0-9]+]]>
// CHECK-NEXT:    %u = {{.*}} -> !ptx.reg<b32 at [[Y:[0-9]+]]>
// CHECK-NEXT:    %v = {{.*}} -> !ptx.reg<b32 at [[V:[0-9]+]]>
// CHECK-NEXT:    %[[I0:.*]] = ptx.alu(%c0) {opcode = "mov.u32"} : (!ptx.imm<b32>) -> !ptx.reg<b32 at [[I:[0-9]+]]>
// CHECK-NEXT:    %[[X0:.*]] = ptx.alu(%tid) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[TID]]>) -> !ptx.reg<b32 at [[X:[0-9]+]]>
// CHECK-NEXT:    %[[Z0:.*]] = ptx.alu(%u) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[Y]]>) -> !ptx.reg<b32 at [[Z:[0-9]+]]>
// CHECK-NEXT:    %[[W0:.*]] = ptx.alu(%v) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[V]]>) -> !ptx.reg<b32 at [[W:[0-9]+]]>
// CHECK-NEXT:    ptx.for %i = %[[I0]] to %n {{.*}} iter_args(%x = %[[X0]] : !ptx.reg<b32 at [[X]]>, %y = %u : !ptx.reg<b32 at [[Y]]>, %z = %[[Z0]] : !ptx.reg<b32 at [[Z]]>, %w = %[[W0]] : !ptx.reg<b32 at [[W]]>)
// CHECK-NEXT:      %[[Z1:.*]] = ptx.alu(%tid) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[TID]]>) -> !ptx.reg<b32 at [[Z]]>
// CHECK-NEXT:      %[[TMP:.*]] = ptx.alu(%y) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[Y]]>) -> !ptx.reg<b32 at [[T:[0-9]+]]>
// CHECK-NEXT:      %[[Y1:.*]] = ptx.alu(%x) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[X]]>) -> !ptx.reg<b32 at [[Y]]>
// CHECK-NEXT:      %[[X1:.*]] = ptx.alu(%[[TMP]]) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[T]]>) -> !ptx.reg<b32 at [[X]]>
// CHECK-NEXT:      ptx.yield %[[X1]], %[[Y1]], %[[Z1]], %w
func.func @copies() attributes {tile.kernel} {
  %c0 = ptx.imm() {value = 0 : i64} : () -> !ptx.imm<b32>
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32>
  %u = ptx.alu(%tid) {opcode = "mov.b32"} : (!ptx.reg<b32>) -> !ptx.reg<b32>
  %v = ptx.alu(%tid, %c1) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32>
  %r:4 = ptx.for %i = %c0 to %n step %c1 : (!ptx.imm<b32>, !ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32> iter_args(%x = %tid : !ptx.reg<b32>, %y = %u : !ptx.reg<b32>, %z = %u : !ptx.reg<b32>, %w = %v : !ptx.reg<b32>) -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>) {
    ptx.yield %y, %x, %tid, %w : !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>
  }
  %s = ptx.alu(%r#0, %tid) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  func.return
}

// -----

// An if's results take what the then branch yields where it can: `a` dies in
// each branch (its use in the other branch is not a later use), so `t` and `e`
// both reuse it, and `t` becomes the first result. The else branch copies in
// parallel: `e` moves out of the first result's registers before `tid` moves
// in. Immediates are copied into registers, never allocated.
// CHECK-LABEL: func.func @branches
// CHECK:         %tid = {{.*}} -> !ptx.reg<b32 at [[TID:[0-9]+]]>
// CHECK:         %a = {{.*}} -> !ptx.reg<b32 at [[A:[0-9]+]]>
// CHECK-NEXT:    %r, %r_1 = ptx.if %p : !ptx.reg<pred at {{[0-9]+}}> -> (!ptx.reg<b32 at [[A]]>, !ptx.reg<b32 at [[R1:[0-9]+]]>) {
// CHECK-NEXT:      %t = ptx.alu(%a, %c1) {{.*}} -> !ptx.reg<b32 at [[A]]>
// CHECK-NEXT:      %[[ONE:.*]] = ptx.alu(%c1) {opcode = "mov.b32"} : (!ptx.imm<b32>) -> !ptx.reg<b32 at [[R1]]>
// CHECK-NEXT:      ptx.yield %t, %[[ONE]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %e = ptx.alu(%a, %c1) {{.*}} -> !ptx.reg<b32 at [[A]]>
// CHECK-NEXT:      %[[E:.*]] = ptx.alu(%e) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[A]]>) -> !ptx.reg<b32 at [[R1]]>
// CHECK-NEXT:      %[[T:.*]] = ptx.alu(%tid) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[TID]]>) -> !ptx.reg<b32 at [[A]]>
// CHECK-NEXT:      ptx.yield %[[T]], %[[E]]
func.func @branches() attributes {tile.kernel} {
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32>
  %p = ptx.alu(%tid, %c1) {opcode = "setp.eq.u32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
  %a = ptx.alu(%tid, %c1) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32>
  %r:2 = ptx.if %p : !ptx.reg<pred> -> (!ptx.reg<b32>, !ptx.reg<b32>) {
    %t = ptx.alu(%a, %c1) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32>
    ptx.yield %t, %c1 : !ptx.reg<b32>, !ptx.imm<b32>
  } else {
    %e = ptx.alu(%a, %c1) {opcode = "sub.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32>
    ptx.yield %tid, %e : !ptx.reg<b32>, !ptx.reg<b32>
  }
  %s = ptx.alu(%r#0, %tid) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  %s2 = ptx.alu(%s, %r#1) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  func.return
}

// -----

// A while loop that forwards its carried values as they are (the usual
// scf.while): initial values built in place, carried values, forwarded values,
// the after region's arguments, the yielded values and the results all sit in
// one bundle each; no copy anywhere.
// CHECK-LABEL: func.func @while_forwarded
// CHECK:         %i0 = {{.*}} -> !ptx.reg<b32 at [[I:[0-9]+]]>
// CHECK-NEXT:    %a0 = {{.*}} -> !ptx.reg<f32 x 4 at [[A:[0-9]+]]>
// CHECK-NEXT:    %k, %acc = ptx.while (%i = %i0 : !ptx.reg<b32 at [[I]]>, %a = %a0 : !ptx.reg<f32 x 4 at [[A]]>) -> (!ptx.reg<b32 at [[I]]>, !ptx.reg<f32 x 4 at [[A]]>) {
// CHECK-NEXT:      %p = ptx.alu
// CHECK-NEXT:      ptx.condition(%p : !ptx.reg<pred at {{[0-9]+}}>) %i, %a : !ptx.reg<b32 at [[I]]>, !ptx.reg<f32 x 4 at [[A]]>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%j: !ptx.reg<b32 at [[I]]>, %b: !ptx.reg<f32 x 4 at [[A]]>):
// CHECK-NEXT:      %j1 = {{.*}} -> !ptx.reg<b32 at [[I]]>
// CHECK-NEXT:      %b1 = {{.*}} -> !ptx.reg<f32 x 4 at [[A]]>
// CHECK-NEXT:      ptx.yield %j1, %b1 : !ptx.reg<b32 at [[I]]>, !ptx.reg<f32 x 4 at [[A]]>
// CHECK-NEXT:    }
// CHECK-NOT:     mov
func.func @while_forwarded() attributes {tile.kernel} {
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %half = ptx.imm() {value = 0.5 : f32} : () -> !ptx.imm<f32>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %x = ptx.param() {param = "p_x"} : () -> !ptx.reg<f32>
  %i0 = ptx.alu(%c1) {opcode = "mov.b32"} : (!ptx.imm<b32>) -> !ptx.reg<b32>
  %a0 = ptx.alu(%x) {opcode = "mov.f32"} : (!ptx.reg<f32>) -> !ptx.reg<f32 x 4>
  %k, %acc = ptx.while (%i = %i0 : !ptx.reg<b32>, %a = %a0 : !ptx.reg<f32 x 4>) -> (!ptx.reg<b32>, !ptx.reg<f32 x 4>) {
    %p = ptx.alu(%i, %n) {opcode = "setp.lt.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
    ptx.condition(%p : !ptx.reg<pred>) %i, %a : !ptx.reg<b32>, !ptx.reg<f32 x 4>
  } do {
  ^bb0(%j: !ptx.reg<b32>, %b: !ptx.reg<f32 x 4>):
    %j1 = ptx.alu(%j, %c1) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32>
    %b1 = ptx.alu(%b, %half) {opcode = "mul.f32"} : (!ptx.reg<f32 x 4>, !ptx.imm<f32>) -> !ptx.reg<f32 x 4>
    ptx.yield %j1, %b1 : !ptx.reg<b32>, !ptx.reg<f32 x 4>
  }
  %out = ptx.alu(%acc, %x) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32>) -> !ptx.reg<f32 x 4>
  %next = ptx.alu(%k, %n) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  func.return
}

// -----

// Copies on each edge of a while loop: initial values that are not movs made
// for the loop (parameters, live after it too) are copied in at entry; the back edge swaps the two
// carried values, a cycle broken through a temporary; a value forwarded twice
// is copied once before the condition (the results are the after region's
// arguments' registers).
// CHECK-LABEL: func.func @while_copies
// CHECK:         %[[N:.*]] = ptx.alu(%n) {opcode = "mov.b32"} : (!ptx.reg<b32 at 0>) -> !ptx.reg<b32 at [[A:[0-9]+]]>
// CHECK-NEXT:    %[[M:.*]] = ptx.alu(%m) {opcode = "mov.b32"} : (!ptx.reg<b32 at 1>) -> !ptx.reg<b32 at [[B:[0-9]+]]>
// CHECK-NEXT:    %r0, %r1, %r2 = ptx.while (%a = %[[N]] : !ptx.reg<b32 at [[A]]>, %b = %[[M]] : !ptx.reg<b32 at [[B]]>) -> (!ptx.reg<b32 at [[A]]>, !ptx.reg<b32 at [[B]]>, !ptx.reg<b32 at [[C:[0-9]+]]>) {
// CHECK-NEXT:      %p = ptx.alu(%a, %b)
// CHECK-NEXT:      %[[TWICE:.*]] = ptx.alu(%a) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[A]]>) -> !ptx.reg<b32 at [[C]]>
// CHECK-NEXT:      ptx.condition(%p : !ptx.reg<pred at 0>) %a, %b, %[[TWICE]] : !ptx.reg<b32 at [[A]]>, !ptx.reg<b32 at [[B]]>, !ptx.reg<b32 at [[C]]>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%x: !ptx.reg<b32 at [[A]]>, %y: !ptx.reg<b32 at [[B]]>, %z: !ptx.reg<b32 at [[C]]>):
// CHECK-NEXT:      %[[TMP:.*]] = ptx.alu(%y) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[B]]>) -> !ptx.reg<b32 at [[T:[0-9]+]]>
// CHECK-NEXT:      %[[TOB:.*]] = ptx.alu(%x) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[A]]>) -> !ptx.reg<b32 at [[B]]>
// CHECK-NEXT:      %[[TOA:.*]] = ptx.alu(%[[TMP]]) {opcode = "mov.b32"} : (!ptx.reg<b32 at [[T]]>) -> !ptx.reg<b32 at [[A]]>
// CHECK-NEXT:      ptx.yield %[[TOA]], %[[TOB]] : !ptx.reg<b32 at [[A]]>, !ptx.reg<b32 at [[B]]>
// CHECK-NEXT:    }
func.func @while_copies() attributes {tile.kernel} {
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %m = ptx.param() {param = "p_m"} : () -> !ptx.reg<b32>
  %r0, %r1, %r2 = ptx.while (%a = %n : !ptx.reg<b32>, %b = %m : !ptx.reg<b32>) -> (!ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>) {
    %p = ptx.alu(%a, %b) {opcode = "setp.lt.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
    ptx.condition(%p : !ptx.reg<pred>) %a, %b, %a : !ptx.reg<b32>, !ptx.reg<b32>, !ptx.reg<b32>
  } do {
  ^bb0(%x: !ptx.reg<b32>, %y: !ptx.reg<b32>, %z: !ptx.reg<b32>):
    ptx.yield %y, %x : !ptx.reg<b32>, !ptx.reg<b32>
  }
  %s = ptx.alu(%r0, %r1) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  %s2 = ptx.alu(%s, %r2) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  %again = ptx.alu(%n, %m) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<b32>
  func.return
}
