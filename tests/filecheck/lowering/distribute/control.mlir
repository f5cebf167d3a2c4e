// distribute-fragments, family 3 (scf): scf.for becomes ptx.for and scf.if
// ptx.if, bodies moved over and converted op by op; carried values and branch
// results are whole bundles (a 64x16 f32 tile: 8 registers), so a literal or a
// splat entering a loop or yielded is first made one (a mov per register); the
// loop counter and bounds are b32 registers or immediates.
// RUN: tawa-opt %s -p distribute-fragments | filecheck %s

// CHECK-LABEL: func.func @loops()
// CHECK-DAG:     %[[C0:.*]] = ptx.imm() {value = 0 : i64} : () -> !ptx.imm<b32>
// CHECK-DAG:     %[[C1:.*]] = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
// CHECK-DAG:     %[[ZERO:.*]] = ptx.imm() {value = 0.000000e+00 : f32} : () -> !ptx.imm<f32>
// CHECK:         %[[X:.*]] = ptx.param() {param = "p_x"} : () -> !ptx.reg<f32>
// CHECK-NEXT:    %[[N:.*]] = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
// CHECK:         %[[A0:.*]] = ptx.alu(%[[ZERO]]) {opcode = "mov.f32"} : (!ptx.imm<f32>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:    %[[K0:.*]] = ptx.alu(%[[C0]]) {opcode = "mov.b32"} : (!ptx.imm<b32>) -> !ptx.reg<b32>
// CHECK-NEXT:    %[[ACC:.*]], %[[CNT:.*]] = ptx.for %{{.*}} = %[[C0]] to %[[N]] step %[[C1]] : (!ptx.imm<b32>, !ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32> iter_args(%[[A:.*]] = %[[A0]] : !ptx.reg<f32 x 8>, %[[K:.*]] = %[[K0]] : !ptx.reg<b32>) -> (!ptx.reg<f32 x 8>, !ptx.reg<b32>) {
// CHECK-NEXT:      %[[SUM:.*]] = ptx.alu(%[[X]], %[[A]]) {opcode = "add.f32"} : (!ptx.reg<f32>, !ptx.reg<f32 x 8>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:      %[[K1:.*]] = ptx.alu(%[[K]], %[[C1]]) {opcode = "add.s32"}
// CHECK-NEXT:      ptx.yield %[[SUM]], %[[K1]] : !ptx.reg<f32 x 8>, !ptx.reg<b32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[BIG:.*]] = ptx.alu(%[[CNT]], %[[C1]]) {opcode = "setp.gt.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<pred>
// CHECK-NEXT:    %{{.*}} = ptx.if %[[BIG]] : !ptx.reg<pred> -> (!ptx.reg<f32 x 8>) {
// CHECK-NEXT:      ptx.yield %[[ACC]] : !ptx.reg<f32 x 8>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[SPLAT:.*]] = ptx.alu(%[[X]]) {opcode = "mov.f32"} : (!ptx.reg<f32>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:      ptx.yield %[[SPLAT]] : !ptx.reg<f32 x 8>
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.if %[[BIG]] : !ptx.reg<pred> {
// CHECK-NEXT:      ptx.wgmma_wait() {pending = 0 : i64} : () -> ()
// CHECK-NEXT:    }
func.func @loops(%x: f32, %n: index) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>, #nvgpu_async.param<scalar 1 : index>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant dense<0.000000e+00> : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %xs = tile.splat %x : f32 -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %acc, %cnt = scf.for %i = %c0 to %n step %c1 iter_args(%a = %zero, %k = %c0) -> (tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>, index) {
      %sum = arith.addf %xs, %a : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
      %k1 = arith.addi %k, %c1 : index
      scf.yield %sum, %k1 : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>, index
    }
    %big = arith.cmpi sgt, %cnt, %c1 : index
    %r = scf.if %big -> (tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
      scf.yield %acc : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    } else {
      scf.yield %xs : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    }
    scf.if %big {
      nvgpu_async.wgmma_wait_group pending = 0
    }
  }
  func.return
}
