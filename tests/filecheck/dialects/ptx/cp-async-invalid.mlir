// ptx.cp_async's verifier: 4, 8 or 16 bytes a copy; one source size per
// global address.
// RUN: TAWA_VERIFY_DIAG | filecheck %s

func.func @k() {
  %src = ptx.param() {param = "p_a"} : () -> !ptx.reg<b64>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %dst = ptx.special() {register = "smem"} : () -> !ptx.reg<b32>
  // expected-error@+1 {{ptx.cp_async: copies 4, 8 or 16 bytes, not 2}}
  ptx.cp_async(%dst, %src, %n) {size = 2 : i64} : (!ptx.reg<b32>, !ptx.reg<b64>, !ptx.reg<b32>) -> ()
  func.return
}
// CHECK: error: ptx.cp_async: copies 4, 8 or 16 bytes, not 2

// -----

func.func @k() {
  %src = ptx.param() {param = "p_a"} : () -> !ptx.reg<b64>
  %n = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
  %dst = ptx.special() {register = "smem"} : () -> !ptx.reg<b32>
  %two = ptx.alu(%src) {opcode = "mov.b64"} : (!ptx.reg<b64>) -> !ptx.reg<b64 x 2>
  // expected-error@+1 {{ptx.cp_async: one b32 source size per global address}}
  ptx.cp_async(%dst, %two, %n) {size = 4 : i64} : (!ptx.reg<b32>, !ptx.reg<b64 x 2>, !ptx.reg<b32>) -> ()
  func.return
}
// CHECK: error: ptx.cp_async: one b32 source size per global address
