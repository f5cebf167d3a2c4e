// persistent{dynamic=true}: programs take their tiles from the launch's tile
// counter. The first tile of a program is its program id; each next one is
// num_programs + a ticket (tile.next_tile), taken when the tile is done, so a
// program that finishes early takes more tiles and causal attention ends
// without a tail of long tiles.
// RUN: tawa-opt %examples/attention.mlir -p 'persistent{longest-first=true dynamic=true}' | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p 'persistent{dynamic=true},aref-partition,pipeline{num-stages=3}' | filecheck %s --check-prefix=PART
// RUN: tawa-opt %examples/gemm.mlir -p 'persistent{dynamic=true},aref-partition,pipeline{num-stages=3 outer-stages=1}' | filecheck %s --check-prefix=ONE
// RUN: not tawa-opt %examples/gemm.mlir -p 'cluster{size=2},persistent{dynamic=true}' 2>&1 | filecheck %s --check-prefix=CLUSTER
// RUN: tawa-opt %examples/gemm.mlir -p 'persistent{dynamic=true},aref-partition,pipeline,convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=LOWER
// RUN: tawa-opt %examples/gemm.mlir -p 'persistent{dynamic=true},aref-partition,pipeline,convert-aref-to-nvgpu-async' -t ptx | filecheck %s --check-prefix=PTX
// RUN: tawa-opt %examples/attention.mlir -p 'tawa-hopper-pipeline{persistent=true longest-first=true dynamic-tiles=true outer-stages=1}' -t ptx | filecheck %s --check-prefix=PIPE
// RUN: not tawa-opt %examples/attention.mlir -p 'tawa-hopper-pipeline{dynamic-tiles=true}' 2>&1 | filecheck %s --check-prefix=ALONE

// The walk is an scf.while from program_id(x) while the tile is below the
// tile count; tile ids still map longest first (tile 0 is the last query
// block), so the counter hands out the longest tiles first.
// CHECK-LABEL: func.func @attention_causal_d64
// CHECK:         %[[TY:tiles_y]] = tile.dim %o, 0
// CHECK:         %[[TX:tiles_x]] = arith.ceildivui
// CHECK:         %[[T:tiles]] = arith.muli %[[TX]], %[[TY]]
// CHECK:         %[[FIRST:.*]] = tile.program_id x
// CHECK-NEXT:    %[[PROGRAMS:.*]] = tile.num_programs x
// CHECK-NEXT:    scf.while (%[[ID:.*]] = %[[FIRST]]) : (index) -> index {
// CHECK-NEXT:      %[[MORE:.*]] = arith.cmpi ult, %[[ID]], %[[T]] : index
// CHECK-NEXT:      scf.condition(%[[MORE]]) %[[ID]] : index
// CHECK-NEXT:    } do {
// CHECK-NEXT:    ^bb0(%[[TID:.*]]: index):
// CHECK-NEXT:      %[[RANK:.*]] = arith.divui %[[TID]], %[[TY]]
// CHECK-NEXT:      %[[C1:.*]] = arith.constant 1
// CHECK-NEXT:      %[[LAST:.*]] = arith.subi %[[TX]], %[[C1]]
// CHECK-NEXT:      %pid_x = arith.subi %[[LAST]], %[[RANK]]
// CHECK:           tile.store
// CHECK-NEXT:      %[[TICKET:.*]] = tile.next_tile %[[T]]
// CHECK-NEXT:      %[[NEXT:.*]] = arith.addi %[[PROGRAMS]], %[[TICKET]] : index
// CHECK-NEXT:      scf.yield %[[NEXT]] : index
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return

// aref-partition: the producer takes each ticket and puts it into a ring of
// its own; the consumer gets it there, so only one thread touches the counter
// and both roles walk the same tiles. The ticket ring is put once per tile
// (around the K loop), so pipeline gives it outer-stages slots: the producer
// may take the next tile while the consumers finish this one.
// PART-LABEL: func.func @gemm_nt
// PART:         %[[TICKETS:tickets]] = aref.create : !aref.aref<[index], depth = 2>
// PART-NEXT:    %[[RING:.*]] = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
// PART-NEXT:    aref.warp_specialize
// PART:           scf.while (%[[ID:.*]] = %{{.*}}, %[[I:.*]] = %idx0, %[[J:.*]] = %idx0) : (index, index, index) -> (index, index, index) {
// PART:             scf.condition(%{{.*}}) %[[ID]], %[[I]], %[[J]] : index, index, index
// PART:           ^bb0(%{{.*}}: index, %[[TI:.*]]: index, %[[KI:.*]]: index):
// PART:             aref.put %[[RING]]
// PART:           %[[TICKET:.*]] = tile.next_tile %tiles
// PART-NEXT:      aref.put %[[TICKETS]][%[[TI]]], %[[TICKET]] : !aref.aref<[index], depth = 2>
// PART-NEXT:      %[[NEXT:.*]] = arith.addi %programs, %[[TICKET]]
// PART:           %[[TI1:.*]] = arith.addi %[[TI]], %{{.*}}
// PART-NEXT:      scf.yield %[[NEXT]], %[[TI1]], %{{.*}} : index, index, index
// PART:         } consumer {
// PART-NOT:       tile.next_tile
// PART:           scf.while
// PART:             tile.store
// PART-NEXT:        %[[CTICKET:.*]] = aref.get %[[TICKETS]][%[[CI:.*]]] : !aref.aref<[index], depth = 2>
// PART-NEXT:        %[[CNEXT:.*]] = arith.addi %programs_1, %[[CTICKET]]
// PART-NEXT:        aref.consumed %[[TICKETS]][%[[CI]]]
// PART:             scf.yield %[[CNEXT]],

// ONE-LABEL: func.func @gemm_nt
// ONE:         aref.create : !aref.aref<[index], depth = 1>
// ONE-NEXT:    aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>

// The blocks of a cluster walk the same cluster tiles; sharing a ticket among
// them is not built.
// CLUSTER: error: func.func: persistent: kernel @gemm_nt runs in clusters, whose blocks must walk the same cluster tiles: dynamic=true would need each ticket shared across the cluster; use the static walk

// convert-aref-to-nvgpu-async: the ticket ring is slots of one i32; its full
// barrier takes the producer thread's plain arrive after it stores the ticket
// (no TMA, no transaction bytes), its empty barrier one arrival per consumer
// thread, each of which reads the ticket with a shared load after its wait.
// LOWER-LABEL: func.func @gemm_nt
// LOWER:         %[[T:tickets]] = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x1xi32>
// LOWER:         %[[FULL:tickets_full]] = nvgpu_async.mbarrier_alloc
// LOWER:         %[[EMPTY:tickets_empty]] = nvgpu_async.mbarrier_alloc
// LOWER:         nvgpu_async.mbarrier_init %[[FULL]], count = 1
// LOWER-NEXT:    nvgpu_async.mbarrier_init %[[EMPTY]], count = 128
// LOWER:         producer {
// LOWER:           %[[TICKET:.*]] = tile.next_tile %tiles
// LOWER:           nvgpu_async.mbarrier_wait %[[EMPTY]][%[[S:.*]]], parity
// LOWER-NEXT:      %[[V:.*]] = arith.index_cast %[[TICKET]] : index to i32
// LOWER-NEXT:      nvgpu_async.smem_store_scalar %[[V]], %[[T]][%[[S]]] : i32 -> !nvgpu_async.smem<2x1xi32>
// LOWER-NEXT:      nvgpu_async.mbarrier_arrive thread %[[FULL]][%[[S]]]
// LOWER:         } consumer {
// LOWER-NOT:       tile.next_tile
// LOWER:           nvgpu_async.store_global
// LOWER:           nvgpu_async.mbarrier_wait %[[FULL]][%[[CS:.*]]], parity
// LOWER-NEXT:      %[[VIEW:.*]] = nvgpu_async.smem_slot %[[T]][%[[CS]]]
// LOWER-NEXT:      %[[READ:.*]] = nvgpu_async.smem_extract %[[VIEW]][0] : !nvgpu_async.smem_view<1xi32>
// LOWER-NEXT:      %[[CT:.*]] = arith.index_cast %[[READ]] : i32 to index
// LOWER-NEXT:      arith.addi %programs_1, %[[CT]]
// LOWER:           nvgpu_async.mbarrier_arrive thread %[[EMPTY]]

// In PTX the counter is a module-scope .global (zero when the module loads);
// the producer thread takes a ticket with atom.global.inc bounded by tiles - 1
// (so the launch leaves the counter at zero), waits for a free slot, stores
// the ticket and arrives on the slot's full barrier; each consumer thread
// waits on it, loads the ticket and arrives on the empty barrier.
// PTX:       .global .align 4 .u32 gemm_nt__tile_counter;
// PTX-NEXT:  .visible .entry gemm_nt(
// PTX:         mul.lo.s32 %[[TILES:r[0-9]+]],
// PTX:         sub.u32 %[[BOUND:r[0-9]+]], %[[TILES]], 1;
// PTX-NEXT:    atom.global.inc.u32 %[[TICKET:r[0-9]+]], [gemm_nt__tile_counter], %[[BOUND]];
// PTX:         mbarrier.try_wait.parity
// PTX:         st.shared.b32 [%{{r[0-9]+}}], %[[TICKET]];
// PTX-NEXT:    mad.lo.u32
// PTX-NEXT:    mbarrier.arrive.shared::cta.b64 _,
// PTX:         mbarrier.try_wait.parity
// PTX:         ld.shared.b32 %{{r[0-9]+}}, [%{{r[0-9]+}}];
// PTX:       .global .align 4 .u32 gemm_nn__tile_counter;

// Through the whole pipeline: every attention kernel gets its own counter.
// PIPE-COUNT-4: .global .align 4 .u32 attention{{.*}}__tile_counter;

// ALONE: tawa-hopper-pipeline{dynamic-tiles=true}: option dynamic_tiles=True is how a persistent kernel takes its tiles: give persistent=True too
