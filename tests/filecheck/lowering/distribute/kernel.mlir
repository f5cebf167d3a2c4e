// distribute-fragments, family 7 (parameters, thread ids, role dispatch): the
// kernel loses its block arguments; each becomes ptx.param reads at the top (a
// tensor map its generic address; a global tensor its pointer, extents and
// strides, the pointer converted to a global address; a scalar one register),
// declared in order on the kernel under the printer's names (a clash gets a
// `_`). Then %tid.x, the shared-memory base rounded up to 1024, the leader and
// the constant predicates. Warpgroup 0 runs the producer region, its thread 0
// only; the consumer region starts with the thread's coordinates.
// RUN: tawa-opt %s -p distribute-fragments | filecheck %s

// CHECK-LABEL: func.func @params() attributes {
// CHECK-SAME:    ptx.params = [#ptx.param_decl<"p_a" : b8[128], align 64>, #ptx.param_decl<"p_a_dim1" : u32>, #ptx.param_decl<"p_p_ptr" : u64>, #ptx.param_decl<"p_p_dim0" : u32>, #ptx.param_decl<"p_p_dim1" : u32>, #ptx.param_decl<"p_p_stride0" : u32>, #ptx.param_decl<"p_p_ptr_" : u32>]
// CHECK:         %[[A:.*]] = ptx.param() {param = "p_a", generic} : () -> !ptx.reg<b64>
// CHECK-NEXT:    %[[K:.*]] = ptx.param() {param = "p_a_dim1"} : () -> !ptx.reg<b32>
// CHECK-NEXT:    %[[P:.*]] = ptx.param() {param = "p_p_ptr"} : () -> !ptx.reg<b64>
// CHECK-NEXT:    ptx.param() {param = "p_p_dim0"} : () -> !ptx.reg<b32>
// CHECK-NEXT:    ptx.param() {param = "p_p_dim1"} : () -> !ptx.reg<b32>
// CHECK-NEXT:    ptx.param() {param = "p_p_stride0"} : () -> !ptx.reg<b32>
// CHECK-NEXT:    ptx.alu(%[[P]]) {opcode = "cvta.to.global.u64"}
// CHECK-NEXT:    ptx.param() {param = "p_p_ptr_"} : () -> !ptx.reg<b32>
// CHECK-NEXT:    %[[TID:.*]] = ptx.special() {register = "%tid.x"}
// CHECK-NEXT:    %[[S0:.*]] = ptx.special() {register = "smem"}
// CHECK-NEXT:    %[[S1:.*]] = ptx.alu(%[[S0]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:    ptx.alu(%[[S1]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:    %[[LEADER:.*]] = ptx.alu(%[[TID]], %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:    ptx.alu(%[[TID]], %[[TID]]) {opcode = "setp.ne.u32"}
// CHECK-NEXT:    ptx.alu(%[[TID]], %[[TID]]) {opcode = "setp.eq.u32"}
// CHECK-NEXT:    %[[WG:.*]] = ptx.alu(%[[TID]], %{{.*}}) {opcode = "shr.u32"}
// CHECK-NEXT:    %[[PRODUCER:.*]] = ptx.alu(%[[WG]], %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:    ptx.if %[[PRODUCER]] : !ptx.reg<pred> {
// CHECK-NEXT:      ptx.if %[[LEADER]] : !ptx.reg<pred> {
// CHECK-NEXT:        %[[X:.*]] = ptx.special() {register = "%ctaid.x"}
// CHECK-NEXT:        %[[NY:.*]] = ptx.special() {register = "%nctaid.y"}
// CHECK-NEXT:        ptx.alu(%[[X]], %[[NY]]) {opcode = "add.s32"}
// CHECK-NEXT:        %[[CL:.*]] = ptx.special() {register = "%clusterid.x"}
// the rank in a cluster of one block: 0
// CHECK-NEXT:        %[[T:.*]] = ptx.alu(%[[CL]], %{{.*}}) {opcode = "add.s32"} : (!ptx.reg<b32>, !ptx.imm<b32>) -> !ptx.reg<b32>
// CHECK-NEXT:        ptx.alu(%[[T]], %[[K]]) {opcode = "add.s32"}
// CHECK-NEXT:      }
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[CTID:.*]] = ptx.alu(%[[TID]], %{{.*}}) {opcode = "sub.u32"}
// CHECK-NEXT:      ptx.alu(%[[CTID]], %{{.*}}) {opcode = "shr.u32"}
// CHECK-NEXT:      ptx.alu(%[[CTID]], %{{.*}}, %{{.*}}) {opcode = "bfe.u32"}
// CHECK-NEXT:      ptx.alu(%[[CTID]], %{{.*}}, %{{.*}}) {opcode = "bfe.u32"}
// CHECK-NEXT:      %[[T4:.*]] = ptx.alu(%[[CTID]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:      ptx.alu(%[[T4]], %{{.*}}) {opcode = "shl.b32"}
// CHECK-NEXT:      ptx.alu(%[[CTID]], %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:      %[[LANE:.*]] = ptx.alu(%[[CTID]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:      ptx.alu(%[[LANE]], %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:      ptx.setmaxnreg() {action = "inc", regs = 232 : i64}
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @params(%a: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %a_dim1: index, %p: !nvgpu_async.global<?x?xf32>, %p_ptr: i32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<dim 0 axis 1 : index>, #nvgpu_async.param<global 1 : !nvgpu_async.global<?x?xf32>>, #nvgpu_async.param<scalar 2 : i32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
    %x = tile.program_id x
    %ny = tile.num_programs y
    %s = arith.addi %x, %ny : index
    %cl = tile.cluster_id
    %r = tile.cluster_rank
    %t = arith.addi %cl, %r : index
    %u = arith.addi %t, %a_dim1 : index
  } consumer {
    nvgpu_async.setmaxnreg inc 232
  }
  func.return
}
