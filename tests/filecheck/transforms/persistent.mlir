// persistent: one program per SM walks the output tiles; the partitioner then
// threads every aref index through the tile loop, so indices keep counting.
// RUN: tawa-opt %examples/gemm.mlir -p 'persistent' | filecheck %s
// RUN: tawa-opt %examples/attention.mlir -p 'persistent{group-m=1},aref-partition,pipeline{num-stages=3}' | filecheck %s --check-prefix=ATTN
// RUN: tawa-opt %examples/attention.mlir -p 'persistent{longest-first=true},aref-partition,pipeline{num-stages=3 outer-stages=1}' | filecheck %s --check-prefix=LONGEST
// RUN: not tawa-opt %examples/gemm.mlir -p 'persistent{group-m=0}' 2>&1 | filecheck %s --check-prefix=GROUP
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline{outer-stages=0}' 2>&1 | filecheck %s --check-prefix=OUTER
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,persistent' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not tawa-opt %s -p 'persistent' 2>&1 | filecheck %s --check-prefix=GRID
// RUN: tawa-opt %S/../../kernels/gemm_rows.mlir -p 'persistent' | filecheck %s --check-prefix=ROWS

// The tile count comes from the stored tensor's extents; tiles go in groups of
// 8 rows (group-m) swept along the columns.
// CHECK-LABEL: func.func @gemm_nt
// CHECK-SAME:    tile.persistent = {{\[}}[0 : i64, 2 : i64, 0 : i64, 128 : i64], [1 : i64, 2 : i64, 1 : i64, 128 : i64]]
// CHECK:         %[[M:.*]] = tile.dim %c, 0
// CHECK:         %[[TX:tiles_x]] = arith.ceildivui %[[M]]
// CHECK:         %[[N:.*]] = tile.dim %c, 1
// CHECK:         %[[TY:tiles_y]] = arith.ceildivui %[[N]]
// CHECK:         %[[T:tiles]] = arith.muli %[[TX]], %[[TY]]
// CHECK:         %[[FIRST:.*]] = tile.program_id x
// CHECK-NEXT:    %[[STEP:.*]] = tile.num_programs x
// CHECK-NEXT:    scf.for %[[ID:.*]] = %[[FIRST]] to %[[T]] step %[[STEP]] {
// CHECK:           %group_width = arith.muli %{{.*}}, %[[TY]]
// CHECK:           %group_rows = arith.minui
// CHECK:           %pid_x = arith.addi
// CHECK:           %pid_y = arith.divui
// CHECK:           arith.muli %pid_x, %bm
// CHECK:           arith.muli %pid_y, %bn
// CHECK:           scf.for
// CHECK:           tile.store
// CHECK:         }
// CHECK-NEXT:    func.return

// Attention's grid is (query blocks, batch x heads); group-m=1 walks it row by
// row. Q, loaded once per tile around the key loops, gets a double-buffered
// ring; K and V keep num-stages slots.
// Longest first: the query block x counts down from the last, all heads (y) of
// one block before the next. With outer-stages=1 Q's ring has a single slot and
// the K/V ring keeps its three.
// LONGEST-LABEL: func.func @attention_causal_d64
// LONGEST:         aref.create : !aref.aref<[tensor<128x64xbf16>], depth = 1>
// LONGEST-NEXT:    aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
// LONGEST:         %[[TY:tiles_y]] = tile.dim %o, 0
// LONGEST:         %[[TX:tiles_x]] = arith.ceildivui
// LONGEST:         scf.for %[[T:tile_id]] =
// LONGEST-NEXT:      %[[RANK:.*]] = arith.divui %[[T]], %[[TY]]
// LONGEST-NEXT:      %[[ONE:.*]] = arith.constant 1
// LONGEST-NEXT:      %[[LAST:.*]] = arith.subi %[[TX]], %[[ONE]]
// LONGEST-NEXT:      %pid_x = arith.subi %[[LAST]], %[[RANK]]
// LONGEST-NEXT:      %pid_y = arith.remui %[[T]], %[[TY]]

// ATTN-LABEL: func.func @attention_d64
// ATTN:         aref.create : !aref.aref<[tensor<128x64xbf16>], depth = 2>
// ATTN-NEXT:    aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
// ATTN:         %pid_x = arith.remui
// ATTN-NEXT:    %pid_y = arith.divui

// OUTER: tawa-opt: pipeline: outer-stages must be at least 1, got 0
// GROUP: tawa-opt: persistent: group-m must be at least 1, got 0
// ORDER: error: func.func: persistent takes tile IR, but kernel @gemm_nt is aref IR (made by aref-partition): run persistent before aref-partition
// A store at program_id(x) + n (n a scalar that may be anything) tells nothing
// about the grid: the diagnostic points at the store and says what to write.
// GRID: persistent.mlir:{{[0-9]+}}:3: error: tile.store: persistent: kernel @no_grid: cannot tell how many programs axis x needs: no coordinate of this store is program_id(x) * B (+ an offset that is non-negative and does not depend on program ids), B a constant or a scalar argument. A persistent kernel computes its tile count from that rule; write the store's coordinates so, or leave the kernel non-persistent (then the launch takes grid=)

// Rows per program from a scalar (the store at program_id(x) * rows + a tile's
// row offset) and 2 x 64 columns: the tile count divides by the scalar.
// ROWS-LABEL: func.func @gemm_rows
// ROWS-SAME:    tile.persistent = {{\[}}[0 : i64, 2 : i64, 0 : i64, 1 : i64, 3 : i64], [1 : i64, 2 : i64, 1 : i64, 128 : i64]]
// ROWS-NEXT:    %[[M:.*]] = tile.dim %c, 0
// ROWS-NEXT:    %[[ROWS:.*]] = arith.index_cast %rows : i32 to index
// ROWS-NEXT:    %tiles_x = arith.ceildivui %[[M]], %[[ROWS]] : index

func.func @no_grid(%a: !tile.desc<?x?xf32, box = [16, 16]>, %n: index) attributes {tile.kernel} {
  %pid = tile.program_id x
  %i = arith.addi %pid, %n : index
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%i, %c0] : !tile.desc<?x?xf32, box = [16, 16]> -> tensor<16x16xf32>
  tile.store %t, %a[%i, %c0] : tensor<16x16xf32> -> !tile.desc<?x?xf32, box = [16, 16]>
  func.return
}
