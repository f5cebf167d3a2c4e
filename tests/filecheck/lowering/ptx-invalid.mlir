// The thread-level passes refuse IR they cannot handle, at the op.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p ptx-allocate | filecheck %s --check-prefix=ALLOC
// RUN: tawa-opt %S/Inputs/ptx-cf-invalid.mlir --split-input-file --verify-diagnostics -p ptx-lower-control-flow | filecheck %S/Inputs/ptx-cf-invalid.mlir --check-prefix=CF
// RUN: tawa-opt %S/Inputs/ptx-cf-invalid.mlir --split-input-file --verify-diagnostics -p ptx-skip-unit-scale | filecheck %S/Inputs/ptx-cf-invalid.mlir --check-prefix=SKIP
// RUN: tawa-opt %S/Inputs/ptx-cf-invalid.mlir --split-input-file --verify-diagnostics -t ptx | filecheck %S/Inputs/ptx-cf-invalid.mlir --check-prefix=PRINT

// ALLOC: error: func.func: ptx-allocate: the kernel is partly allocated; allocate all of it or none
func.func @partly() attributes {tile.kernel} {
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32 at 0>
  %c1 = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
  %a = ptx.alu(%tid, %c1) {opcode = "add.s32"} : (!ptx.reg<b32 at 0>, !ptx.imm<b32>) -> !ptx.reg<b32>
  func.return
}

// -----

// ALLOC: error: test.op: ptx-allocate: a thread-level kernel holds ptx ops only (run distribute-fragments first)
func.func @foreign() attributes {tile.kernel} {
  %tid = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32>
  "test.op"(%tid) : (!ptx.reg<b32>) -> ()
  func.return
}

// -----

// ALLOC: error: func.func: ptx-allocate takes thread-level IR (made by distribute-fragments), but kernel @args is tile IR: run distribute-fragments first
func.func @args(%x: i32) attributes {tile.kernel} {
  func.return
}
