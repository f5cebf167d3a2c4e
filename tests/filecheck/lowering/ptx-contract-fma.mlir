// ptx-contract-fma: an unguarded mul.f32 used only by an add.f32 of its block
// becomes one fma.rn.f32, each operand read through its composed map.
// RUN: tawa-opt %s -p ptx-contract-fma | filecheck %s
// RUN: tawa-opt %s -p ptx-contract-fma,ptx-contract-fma | filecheck %s
// RUN: tawa-opt %s -t ptx | filecheck %s --check-prefix=PTX
// RUN: not tawa-opt %s -p ptx-allocate,ptx-contract-fma 2>&1 | filecheck %s --check-prefix=ALLOCATED

// CHECK-LABEL: func.func @contract
// The product on the right of the add, a row broadcast as its second factor.
// CHECK:         %fused = ptx.alu(%part, %row, %acc) {opcode = "fma.rn.f32", maps = [array<i32>, array<i32: 0, 0, 1, 1>, array<i32>]}
// The product on the left, read through a map: the factors' maps compose.
// CHECK-NEXT:    %swapped = ptx.alu(%part, %row, %acc) {opcode = "fma.rn.f32", maps = [array<i32: 1, 0, 3, 2>, array<i32: 0, 0, 1, 1>, array<i32>]}
// Used twice, guarded, or in another block: left alone.
// CHECK-NEXT:    %twice = ptx.alu(%part, %row) {opcode = "mul.f32"
// CHECK-NEXT:    %t1 = ptx.alu(%twice, %acc) {opcode = "add.f32"}
// CHECK-NEXT:    %t2 = ptx.alu(%twice, %t1) {opcode = "add.f32"}
// CHECK-NEXT:    %guarded = ptx.alu(%part, %row) if %p {opcode = "mul.f32"
// CHECK-NEXT:    %g1 = ptx.alu(%guarded, %acc) {opcode = "add.f32"}
// CHECK-NEXT:    %outer = ptx.alu(%part, %part) {opcode = "mul.f32"}
// CHECK:           ptx.alu(%outer, %x) {opcode = "add.f32"}

// PTX-LABEL: .visible .entry contract(
// PTX-COUNT-8: fma.rn.f32
// PTX-NOT:     fma.rn.f32

// ALLOCATED: ptx-contract-fma runs before ptx-allocate
func.func @contract() attributes {tile.kernel, nvgpu_async.launch = #nvgpu_async.launch<threads = 128, smem = 0, cluster = 1>, ptx.params = [#ptx.param_decl<"p_n" : u32>]} {
  %c0 = ptx.imm() {value = 0 : i64} : () -> !ptx.imm<b32>
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %half = ptx.imm() {value = 0.5 : f32} : () -> !ptx.imm<f32>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %s = ptx.alu(%n) {opcode = "cvt.rn.f32.s32"} : (!ptx.reg<b32>) -> !ptx.reg<f32 x 4>
  %part = ptx.alu(%s, %half) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.imm<f32>) -> !ptx.reg<f32 x 4>
  %row = ptx.alu(%s) {opcode = "ex2.approx.ftz.f32", maps = [array<i32: 0, 2>]} : (!ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 2>
  %acc = ptx.alu(%s, %s) {opcode = "sub.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
  %p = ptx.alu(%n, %c0) {opcode = "setp.ne.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
  %prod = ptx.alu(%part, %row) {opcode = "mul.f32", maps = [array<i32>, array<i32: 0, 0, 1, 1>]} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 4>
  %fused = ptx.alu(%acc, %prod) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
  %prod2 = ptx.alu(%part, %row) {opcode = "mul.f32", maps = [array<i32>, array<i32: 0, 0, 1, 1>]} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 4>
  %swapped = ptx.alu(%prod2, %acc) {opcode = "add.f32", maps = [array<i32: 1, 0, 3, 2>, array<i32>]} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
  %twice = ptx.alu(%part, %row) {opcode = "mul.f32", maps = [array<i32>, array<i32: 0, 0, 1, 1>]} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 2>) -> !ptx.reg<f32 x 4>
  %t1 = ptx.alu(%twice, %acc) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
  %t2 = ptx.alu(%twice, %t1) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
  %guarded = ptx.alu(%part, %row) if %p {opcode = "mul.f32", maps = [array<i32>, array<i32: 0, 0, 1, 1>]} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 2>, !ptx.reg<pred>) -> !ptx.reg<f32 x 4>
  %g1 = ptx.alu(%guarded, %acc) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
  %outer = ptx.alu(%part, %part) {opcode = "mul.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
  %out = ptx.for %i = %c0 to %n step %c1 : (!ptx.imm<b32>, !ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32> iter_args(%x = %fused : !ptx.reg<f32 x 4>) -> (!ptx.reg<f32 x 4>) {
    %y = ptx.alu(%outer, %x) {opcode = "add.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
    ptx.yield %y : !ptx.reg<f32 x 4>
  }
  func.return
}
