// A ptx.if may name the label its end lowers to; the name round-trips in the
// custom and the generic syntax.
// RUN: TAWA_ROUNDTRIP

// CHECK-LABEL: func.func @k
// CHECK:         %{{.*}} = ptx.if uniform %{{.*}} : !ptx.reg<pred> label "unit_scale" -> (!ptx.reg<f32 x 4>) {
// CHECK:         ptx.if %{{.*}} : !ptx.reg<pred> {
func.func @k() {
  %0 = ptx.special() {register = "%tid.x"} : () -> !ptx.reg<b32>
  %1 = ptx.imm() {value = 0 : i64} : () -> !ptx.imm<b32>
  %2 = ptx.alu(%0, %1) {opcode = "setp.eq.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
  %3 = ptx.imm() {value = 1.0 : f32} : () -> !ptx.imm<f32>
  %4 = ptx.alu(%3) {opcode = "mov.f32"} : (!ptx.imm<f32>) -> !ptx.reg<f32 x 4>
  %5 = ptx.if uniform %2 : !ptx.reg<pred> label "unit_scale" -> (!ptx.reg<f32 x 4>) {
    %6 = ptx.alu(%4, %4) {opcode = "mul.f32"} : (!ptx.reg<f32 x 4>, !ptx.reg<f32 x 4>) -> !ptx.reg<f32 x 4>
    ptx.yield %6 : !ptx.reg<f32 x 4>
  } else {
    ptx.yield %4 : !ptx.reg<f32 x 4>
  }
  ptx.if %2 : !ptx.reg<pred> {
    ptx.bar(%1) : (!ptx.imm<b32>) -> ()
  }
  func.return
}
