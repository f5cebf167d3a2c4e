// distribute-fragments, family 3 (scf): scf.while becomes ptx.while and
// scf.condition ptx.condition, both regions moved over and converted op by op.
// Carried values (an index and a 64x16 f32 tile: 8 registers) are whole
// bundles: a splat entering the loop is made one (a mov per register), as is a
// literal the condition forwards; the results are what the condition forwards.
// RUN: tawa-opt %s -p distribute-fragments | filecheck %s

// CHECK-LABEL: func.func @loops()
// CHECK-DAG:     %[[C0:.*]] = ptx.imm() {value = 0 : i64} : () -> !ptx.imm<b32>
// CHECK-DAG:     %[[C1:.*]] = ptx.imm() {value = 1 : i64} : () -> !ptx.imm<b32>
// CHECK:         %[[X:.*]] = ptx.param() {param = "p_x"} : () -> !ptx.reg<f32>
// CHECK-NEXT:    %[[N:.*]] = ptx.param() {param = "p_n"} : () -> !ptx.reg<b32>
// CHECK:         %[[I0:.*]] = ptx.alu(%[[C0]]) {opcode = "mov.b32"} : (!ptx.imm<b32>) -> !ptx.reg<b32>
// CHECK-NEXT:    %[[A0:.*]] = ptx.alu(%[[X]]) {opcode = "mov.f32"} : (!ptx.reg<f32>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:    %[[K:.*]], %[[ACC:.*]] = ptx.while (%[[I:.*]] = %[[I0]] : !ptx.reg<b32>, %[[A:.*]] = %[[A0]] : !ptx.reg<f32 x 8>) -> (!ptx.reg<b32>, !ptx.reg<f32 x 8>) {
// CHECK-NEXT:      %[[GO:.*]] = ptx.alu(%[[I]], %[[N]]) {opcode = "setp.lt.s32"} : (!ptx.reg<b32>, !ptx.reg<b32>) -> !ptx.reg<pred>
// CHECK-NEXT:      ptx.condition(%[[GO]] : !ptx.reg<pred>) %[[I]], %[[A]] : !ptx.reg<b32>, !ptx.reg<f32 x 8>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%[[J:.*]]: !ptx.reg<b32>, %[[B:.*]]: !ptx.reg<f32 x 8>):
// CHECK-NEXT:      %[[J1:.*]] = ptx.alu(%[[J]], %[[C1]]) {opcode = "add.s32"}
// CHECK-NEXT:      %[[SUM:.*]] = ptx.alu(%[[X]], %[[B]]) {opcode = "add.f32"} : (!ptx.reg<f32>, !ptx.reg<f32 x 8>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:      ptx.yield %[[J1]], %[[SUM]] : !ptx.reg<b32>, !ptx.reg<f32 x 8>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[M:.*]] = ptx.while (%[[E:.*]] = %[[K]] : !ptx.reg<b32>) -> (!ptx.reg<b32>) {
// CHECK-NEXT:      %[[MORE:.*]] = ptx.alu(%[[E]], %[[N]]) {opcode = "setp.lt.s32"}
// CHECK-NEXT:      %[[ONE:.*]] = ptx.alu(%[[C1]]) {opcode = "mov.b32"} : (!ptx.imm<b32>) -> !ptx.reg<b32>
// CHECK-NEXT:      ptx.condition(%[[MORE]] : !ptx.reg<pred>) %[[ONE]] : !ptx.reg<b32>
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: !ptx.reg<b32>):
// CHECK-NEXT:      ptx.yield %[[N]] : !ptx.reg<b32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[BIG:.*]] = ptx.alu(%[[M]], %[[C1]]) {opcode = "setp.gt.s32"}
// CHECK-NEXT:    ptx.if %[[BIG]] : !ptx.reg<pred> {
// CHECK-NEXT:      %{{.*}} = ptx.alu(%[[ACC]], %[[ACC]]) {opcode = "add.f32"} : (!ptx.reg<f32 x 8>, !ptx.reg<f32 x 8>) -> !ptx.reg<f32 x 8>
// CHECK-NEXT:    }
// CHECK-NOT:     scf.
func.func @loops(%x: f32, %n: index) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>, #nvgpu_async.param<scalar 1 : index>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %xs = tile.splat %x : f32 -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %k, %acc = scf.while (%i = %c0, %a = %xs) : (index, tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) -> (index, tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
      %go = arith.cmpi slt, %i, %n : index
      scf.condition(%go) %i, %a : index, tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    } do {
    ^bb0(%j: index, %b: tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>):
      %j1 = arith.addi %j, %c1 : index
      %sum = arith.addf %xs, %b : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
      scf.yield %j1, %sum : index, tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    }
    %m = scf.while (%e = %k) : (index) -> index {
      %more = arith.cmpi slt, %e, %n : index
      scf.condition(%more) %c1 : index
    } do {
    ^bb0(%f: index):
      scf.yield %n : index
    }
    %big = arith.cmpi sgt, %m, %c1 : index
    scf.if %big {
      %twice = arith.addf %acc, %acc : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    }
  }
  func.return
}
