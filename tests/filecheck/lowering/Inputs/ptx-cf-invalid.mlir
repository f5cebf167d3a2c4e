// Allocated kernels the later stages refuse (see ../ptx-invalid.mlir).

// CF: error: ptx.for: ptx-lower-control-flow: yielded value 0 is in !ptx.reg<b32 at 3>, not in !ptx.reg<b32 at 2> (ptx-allocate inserts the copies)
// SKIP: error: ptx.param: ptx-skip-unit-scale runs before ptx-allocate (its branch needs registers of its own)
// PRINT: -t ptx needs lowered kernels
func.func @copy_missing() attributes {tile.kernel} {
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32 at 0>
  %init = ptx.alu(%c1) {opcode = "mov.b32"} : (!ptx.imm<b32>) -> !ptx.reg<b32 at 2>
  %r = ptx.for %i = %n to %n step %c1 : (!ptx.reg<b32 at 0>, !ptx.reg<b32 at 0>, !ptx.imm<b32>) -> !ptx.reg<b32 at 1> iter_args(%a = %init : !ptx.reg<b32 at 2>) -> (!ptx.reg<b32 at 2>) {
    %x = ptx.alu(%a, %c1) {opcode = "add.s32"} : (!ptx.reg<b32 at 2>, !ptx.imm<b32>) -> !ptx.reg<b32 at 3>
    ptx.yield %x : !ptx.reg<b32 at 3>
  }
  func.return
}

// -----

// CF: error: ptx.while: ptx-lower-control-flow: forwarded value 0 is in !ptx.reg<b32 at 1>, not in !ptx.reg<b32 at 2> (ptx-allocate inserts the copies)
// SKIP: error: ptx.param: ptx-skip-unit-scale runs before ptx-allocate (its branch needs registers of its own)
// PRINT: -t ptx needs lowered kernels
func.func @while_copy_missing() attributes {tile.kernel} {
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32 at 0>
  %r = ptx.while (%a = %n : !ptx.reg<b32 at 0>) -> (!ptx.reg<b32 at 2>) {
    %p = ptx.alu(%a, %n) {opcode = "setp.lt.s32"} : (!ptx.reg<b32 at 0>, !ptx.reg<b32 at 0>) -> !ptx.reg<pred at 0>
    %t = ptx.alu(%a, %a) {opcode = "add.s32"} : (!ptx.reg<b32 at 0>, !ptx.reg<b32 at 0>) -> !ptx.reg<b32 at 1>
    ptx.condition(%p : !ptx.reg<pred at 0>) %t : !ptx.reg<b32 at 1>
  } do {
  ^bb0(%x: !ptx.reg<b32 at 2>):
    ptx.yield %n : !ptx.reg<b32 at 0>
  }
  func.return
}

// -----

// CF: error: ptx.if: ptx-lower-control-flow: registers are not allocated (run ptx-allocate)
// SKIP-NOT: error
// PRINT: error: func.func: PTX printer: the kernel lists no parameters (ptx.params: run distribute-fragments)
func.func @unallocated() attributes {tile.kernel, nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32>
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %p = ptx.alu(%tid, %c1) {opcode = "setp.eq.u32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
  %r = ptx.if %p : !ptx.reg<pred> -> (!ptx.reg<b32>) {
    ptx.yield %tid : !ptx.reg<b32>
  } else {
    ptx.yield %tid : !ptx.reg<b32>
  }
  func.return
}

// -----

// An if that yields nothing was lowered unallocated (the pass takes allocated
// kernels: ptx-allocate, run after it, found labels and branches where its
// liveness is exact on structured control flow).
// CF: error: ptx.if: ptx-lower-control-flow: registers are not allocated (run ptx-allocate)
// SKIP-NOT: error
// PRINT: error: func.func: PTX printer: the kernel lists no parameters (ptx.params: run distribute-fragments)
func.func @unallocated_guard() attributes {tile.kernel, nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32>
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %p = ptx.alu(%tid, %c1) {opcode = "setp.eq.u32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
  ptx.if %p : !ptx.reg<pred> {
    ptx.yield
  }
  func.return
}
