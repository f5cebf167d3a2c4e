// distribute-fragments, family 4 (TMA and barriers): rings and barrier arrays
// are the aligned shared-memory base plus their offset, a slot or barrier the
// address plus index times its size (an immediate index: one add). The leader
// initialises the barriers; the producer branch keeps its setmaxnreg outside
// the leader's branch; a warpgroup arrives through its thread 0; the first
// consumer thread issues TMA stores and their bulk groups; a tile moves as one
// box per 128-byte chunk (the maps' types are kept by parameter name for the
// thread simulator). Ping-pong turns are named barriers 2 + w, the last
// warpgroup opening the first. In a cluster, each block multicasts its share of
// the boxes and thread r of a warpgroup arrives in block r through mapa.
// RUN: tawa-opt %s --split-input-file -p distribute-fragments | filecheck %s

// The tensor maps' boxes and swizzles stay in the launch contract (the ABI),
// where the thread simulator reads them.
// CHECK-LABEL: func.func @pipeline()
// CHECK-SAME:    nvgpu_async.abi = [#nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<map 1 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<scalar 2 : index>]
// CHECK-SAME:    ptx.params = [#ptx.param_decl<"p_a" : b8[128], align 64>, #ptx.param_decl<"p_c" : b8[128], align 64>, #ptx.param_decl<"p_i" : u32>]
// CHECK:         %[[A:.*]] = ptx.param() {param = "p_a", generic} : () -> !ptx.reg<b64>
// CHECK-NEXT:    %[[C:.*]] = ptx.param() {param = "p_c", generic} : () -> !ptx.reg<b64>
// CHECK-NEXT:    %[[I:.*]] = ptx.param() {param = "p_i"} : () -> !ptx.reg<b32>
// CHECK-NEXT:    %[[TID:.*]] = ptx.special() {register = "%tid.x"}
// CHECK-NEXT:    %[[SMEM0:.*]] = ptx.special() {register = "smem"}
// CHECK-NEXT:    %[[SMEM1:.*]] = ptx.alu(%[[SMEM0]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:    %[[SMEM:.*]] = ptx.alu(%[[SMEM1]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:    %[[LEADER:.*]] = ptx.alu(%[[TID]], %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:    %[[FALSE:.*]] = ptx.alu(%[[TID]], %[[TID]]) {opcode = "setp.ne.u32"}
// CHECK-NEXT:    %[[TRUE:.*]] = ptx.alu(%[[TID]], %[[TID]]) {opcode = "setp.eq.u32"}
// CHECK-NEXT:    %[[RING:.*]] = ptx.alu(%[[SMEM]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:    %[[FULL:.*]] = ptx.alu(%[[SMEM]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:    %[[EMPTY:.*]] = ptx.alu(%[[SMEM]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:    ptx.mbarrier_init(%[[FULL]]) if %[[LEADER]] {offset = 0 : i64, count = 1 : i64}
// CHECK-NEXT:    ptx.mbarrier_init(%[[FULL]]) if %[[LEADER]] {offset = 8 : i64, count = 1 : i64}
// CHECK-NEXT:    ptx.mbarrier_init(%[[EMPTY]]) if %[[LEADER]] {offset = 0 : i64, count = 2 : i64}
// CHECK-NEXT:    ptx.mbarrier_init(%[[EMPTY]]) if %[[LEADER]] {offset = 8 : i64, count = 2 : i64}
// CHECK-NEXT:    ptx.fence() if %[[LEADER]] {kind = "mbarrier_init.release.cluster"}
// CHECK-NEXT:    ptx.bar(%{{.*}}) : (!ptx.imm<b32>) -> ()
// CHECK-NEXT:    %[[WG:.*]] = ptx.alu(%[[TID]], %{{.*}}) {opcode = "shr.u32"}
// CHECK-NEXT:    %[[PRODUCER:.*]] = ptx.alu(%[[WG]], %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:    ptx.if %[[PRODUCER]] : !ptx.reg<pred> {
// CHECK-NEXT:      ptx.setmaxnreg() {action = "dec", regs = 24 : i64}
// CHECK-NEXT:      ptx.if %[[LEADER]] : !ptx.reg<pred> {
// CHECK-NEXT:        ptx.prefetch_tensormap(%[[A]])
// CHECK-NEXT:        %[[E:.*]] = ptx.alu(%[[I]], %{{.*}}, %[[EMPTY]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:        %[[PARITY:.*]] = ptx.alu(%{{.*}}) {opcode = "mov.b32"} : (!ptx.imm<b32>) -> !ptx.reg<b32>
// CHECK-NEXT:        %{{.*}} = ptx.mbarrier_wait(%[[E]], %[[PARITY]]) {offset = 0 : i64}
// CHECK-NEXT:        %[[F:.*]] = ptx.alu(%[[I]], %{{.*}}, %[[FULL]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:        ptx.mbarrier_arrive(%[[F]]) {offset = 0 : i64, expect_tx = 32768 : i64}
// CHECK-NEXT:        %[[DST:.*]] = ptx.alu(%[[I]], %{{.*}}, %[[RING]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:        %[[BAR:.*]] = ptx.alu(%[[I]], %{{.*}}, %[[FULL]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:        %[[COL64:.*]] = ptx.alu(%[[I]], %{{.*}}) {opcode = "add.s32"}
// CHECK-NEXT:        ptx.tma_load(%[[DST]], %[[A]], %[[I]], %[[I]], %[[BAR]]) {offset = 0 : i64,
// CHECK-NEXT:        ptx.tma_load(%[[DST]], %[[A]], %[[COL64]], %[[I]], %[[BAR]]) {offset = 16384 : i64,
// CHECK-NEXT:      }
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %[[CTID:.*]] = ptx.alu(%[[TID]], %{{.*}}) {opcode = "sub.u32"}
// CHECK-NEXT:      %[[CWG:.*]] = ptx.alu(%[[CTID]], %{{.*}}) {opcode = "shr.u32"}
// CHECK:           %[[CLEADER:.*]] = ptx.alu(%[[CTID]], %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:      %[[LANE:.*]] = ptx.alu(%[[CTID]], %{{.*}}) {opcode = "and.b32"}
// CHECK-NEXT:      %[[WGLEADER:.*]] = ptx.alu(%[[LANE]], %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:      ptx.setmaxnreg() {action = "inc", regs = 240 : i64}
// CHECK-NEXT:      %[[OWN:.*]] = ptx.alu(%[[CWG]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:      %[[N1:.*]] = ptx.alu(%[[CWG]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:      %[[N2:.*]] = ptx.alu(%[[N1]], %{{.*}}) {opcode = "rem.u32"}
// CHECK-NEXT:      %[[NEXT:.*]] = ptx.alu(%[[N2]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:      %[[LAST:.*]] = ptx.alu(%[[CWG]], %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:      ptx.bar(%{{.*}}) if %[[LAST]] {threads = 256 : i64, arrive}
// full[0]: an immediate index, one add
// CHECK-NEXT:      %[[F0:.*]] = ptx.alu(%[[FULL]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:      %[[P0:.*]] = ptx.alu(%{{.*}}) {opcode = "mov.b32"}
// CHECK-NEXT:      %{{.*}} = ptx.mbarrier_wait(%[[F0]], %[[P0]])
// CHECK-NEXT:      ptx.bar(%[[OWN]]) {threads = 256 : i64} : (!ptx.reg<b32>) -> ()
// CHECK-NEXT:      ptx.bar(%[[NEXT]]) {threads = 256 : i64, arrive} : (!ptx.reg<b32>) -> ()
// CHECK-NEXT:      %[[E1:.*]] = ptx.alu(%[[I]], %{{.*}}, %[[EMPTY]]) {opcode = "mad.lo.u32"}
// CHECK-NEXT:      ptx.mbarrier_arrive(%[[E1]]) if %[[WGLEADER]] {offset = 0 : i64}
// CHECK-NEXT:      ptx.bulk_wait() if %[[CLEADER]] {pending = 0 : i64}
// CHECK-NEXT:      ptx.bar(%{{.*}}) {threads = 256 : i64} : (!ptx.imm<b32>) -> ()
// CHECK-NEXT:      ptx.fence() {kind = "proxy.async.shared::cta"}
// CHECK-NEXT:      %[[SRC:.*]] = ptx.alu(%[[RING]], %{{.*}}) {opcode = "add.u32"}
// CHECK-NEXT:      %[[COL:.*]] = ptx.alu(%[[I]], %{{.*}}) {opcode = "add.s32"}
// CHECK-NEXT:      ptx.tma_store(%[[C]], %[[I]], %[[I]], %[[SRC]]) if %[[CLEADER]] {offset = 0 : i64}
// CHECK-NEXT:      ptx.tma_store(%[[C]], %[[COL]], %[[I]], %[[SRC]]) if %[[CLEADER]] {offset = 16384 : i64}
// CHECK-NEXT:      ptx.bulk_commit() if %[[CLEADER]]
// CHECK-NEXT:    }
func.func @pipeline(%a: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %c: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<map 1 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<scalar 2 : index>], nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = 132096, cluster = 1>} {
  %ring = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x128xbf16>
  %full = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  %empty = nvgpu_async.mbarrier_alloc offset = 65552 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_init %full, count = 1 : !nvgpu_async.mbarrier<2>
  nvgpu_async.mbarrier_init %empty, count = 2 : !nvgpu_async.mbarrier<2>
  nvgpu_async.fence_mbarrier_init
  nvgpu_async.cta_barrier
  nvgpu_async.role_dispatch consumers = 2 registers = [24, 240] producer {
    nvgpu_async.setmaxnreg dec 24
    nvgpu_async.prefetch_tensor_map %a : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>
    %c1 = arith.constant 1 : index
    nvgpu_async.mbarrier_wait %empty[%i], parity %c1 : !nvgpu_async.mbarrier<2>
    nvgpu_async.mbarrier_arrive_expect_tx %full[%i], bytes = 32768 : !nvgpu_async.mbarrier<2>
    nvgpu_async.tma_load %a[%i, %i], %ring[%i], %full[%i] : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x128xbf16>, !nvgpu_async.mbarrier<2>
  } consumer {
    nvgpu_async.setmaxnreg inc 240
    nvgpu_async.mma_turn_init
    %c0 = arith.constant 0 : index
    nvgpu_async.mbarrier_wait %full[%c0], parity %c0 : !nvgpu_async.mbarrier<2>
    nvgpu_async.mma_turn_begin
    nvgpu_async.mma_turn_end
    nvgpu_async.mbarrier_arrive warpgroup %empty[%i] : !nvgpu_async.mbarrier<2>
    nvgpu_async.tma_store_wait pending = 0
    nvgpu_async.consumer_barrier
    nvgpu_async.fence_proxy_async
    nvgpu_async.tma_store %ring[%c0], %c[%i, %i] : !nvgpu_async.smem<2x128x128xbf16>, !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>
    nvgpu_async.tma_store_commit
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @cluster()
// CHECK:         %[[RANK:.*]] = ptx.special() {register = "%cluster_ctarank"}
// CHECK:           %[[MASK:.*]] = ptx.alu(%{{.*}}) {opcode = "mov.b16"} : (!ptx.imm<b16>) -> !ptx.reg<b16>
// CHECK-NEXT:      %[[INNER:.*]] = ptx.alu(%[[RANK]], %{{.*}}, %{{.*}}) {opcode = "mad.lo.s32"}
// CHECK-NEXT:      %[[SHARE:.*]] = ptx.alu(%[[RANK]], %{{.*}}, %{{.*}}) {opcode = "mad.lo.u32"}
// CHECK-NEXT:      ptx.tma_load(%[[SHARE]], %{{.*}}, %[[INNER]], %{{.*}}, %{{.*}}, %[[MASK]]) {offset = 0 : i64,
// CHECK-NOT:       ptx.tma_load
// CHECK:         } else {
// CHECK:           %[[CLEAD:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "setp.eq.u32"}
// CHECK-NEXT:      %[[LANE:.*]] = ptx.alu(%{{.*}}, %{{.*}}) {opcode = "and.b32"}
// CHECK:           %[[E:.*]] = ptx.alu(%{{.*}}, %{{.*}}, %{{.*}}) {opcode = "mad.lo.u32"}
// CHECK-NEXT:      %[[SIGNALS:.*]] = ptx.alu(%[[LANE]], %{{.*}}) {opcode = "setp.lt.u32"}
// CHECK-NEXT:      %[[REMOTE:.*]] = ptx.alu(%[[E]], %[[LANE]]) if %[[SIGNALS]] {opcode = "mapa.shared::cluster.u32"}
// CHECK-NEXT:      ptx.mbarrier_arrive(%[[REMOTE]]) if %[[SIGNALS]] {offset = 0 : i64, remote}
// CHECK-NEXT:    }
// CHECK-NEXT:    ptx.cluster_barrier()
func.func @cluster(%b: !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, %i: index) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>, #nvgpu_async.param<scalar 1 : index>], nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = 66592, cluster = 2>} {
  %ring = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x128xbf16>
  %full = nvgpu_async.mbarrier_alloc offset = 65536 : !nvgpu_async.mbarrier<2>
  %empty = nvgpu_async.mbarrier_alloc offset = 65552 : !nvgpu_async.mbarrier<2>
  nvgpu_async.role_dispatch consumers = 2 producer {
    nvgpu_async.tma_load %b[%i, %i], %ring[%i], %full[%i] multicast(2) : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>, !nvgpu_async.smem<2x128x128xbf16>, !nvgpu_async.mbarrier<2>
  } consumer {
    nvgpu_async.mbarrier_arrive warpgroup %empty[%i] cluster(2) : !nvgpu_async.mbarrier<2>
  }
  nvgpu_async.cluster_barrier
  func.return
}
