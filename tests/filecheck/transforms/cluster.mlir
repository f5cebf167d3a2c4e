// cluster: blocks run in clusters of two along x. The pass only marks the
// kernel; persistent then walks cluster tiles, and the lowering multicasts the
// loads every block of a cluster issues alike (see lowering/cluster.mlir).
// RUN: tawa-opt %examples/gemm.mlir -p 'cluster' | filecheck %s --check-prefix=MARK
// RUN: tawa-opt %examples/gemm.mlir -p 'cluster,persistent' | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p 'cluster{size=1}' | filecheck %s --check-prefix=ONE
// RUN: not tawa-opt %examples/gemm.mlir -p 'cluster{size=3}' 2>&1 | filecheck %s --check-prefix=SIZE
// RUN: not tawa-opt %examples/gemm.mlir -p 'persistent,cluster' 2>&1 | filecheck %s --check-prefix=AFTER
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,cluster' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not tawa-opt %s -p 'cluster' 2>&1 | filecheck %s --check-prefix=NOTHING

// MARK:     func.func @gemm_nt
// MARK-SAME:  tile.cluster = 2 : i64
// MARK:       tile.program_id x
// MARK-NOT:   tile.cluster_rank
// ONE-NOT:  tile.cluster

// The persistent loop counts clusters from tile.cluster_id, programs / 2 apart,
// over ceil(x tiles / 2) cluster columns; group-m 8 becomes 4 cluster rows. The
// block of rank r takes x tile 2 cx + r: both blocks share pid_y, hence B.
// CHECK-LABEL: func.func @gemm_nt
// CHECK-SAME:    tile.cluster = 2 : i64
// CHECK:         %[[TX:tiles_x]] = arith.ceildivui
// CHECK:         %[[TY:tiles_y]] = arith.ceildivui
// CHECK:         %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[CX:clusters_x]] = arith.ceildivui %[[TX]], %[[TWO]]
// CHECK-NEXT:    %[[T:tiles]] = arith.muli %[[CX]], %[[TY]]
// CHECK-NEXT:    %[[FIRST:.*]] = tile.cluster_id
// CHECK-NEXT:    %[[P:programs]] = tile.num_programs x
// CHECK-NEXT:    %[[TWO2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[STEP:clusters]] = arith.ceildivui %[[P]], %[[TWO2]]
// CHECK-NEXT:    scf.for %{{.*}} = %[[FIRST]] to %[[T]] step %[[STEP]] {
// CHECK:           %[[FOUR:.*]] = arith.constant 4 : index
// CHECK-NEXT:      %group_width = arith.muli %[[FOUR]], %[[TY]]
// CHECK:           %[[COL:cluster_x]] = arith.addi
// CHECK-NEXT:      %pid_y = arith.divui
// CHECK-NEXT:      %[[S:.*]] = arith.constant 2 : index
// CHECK-NEXT:      %[[BASE:.*]] = arith.muli %[[COL]], %[[S]]
// CHECK-NEXT:      %[[RANK:.*]] = tile.cluster_rank
// CHECK-NEXT:      %[[X:pid_x]] = arith.addi %[[BASE]], %[[RANK]]
// CHECK:           arith.muli %[[X]], %bm
// CHECK:           arith.muli %pid_y, %bn

// SIZE: tawa-opt: cluster{size=3}: size must be a power of two from 1 to 8
// AFTER: error: func.func: cluster: kernel @gemm_nt is already persistent; run cluster before persistent
// ORDER: error: func.func: cluster takes tile IR, but kernel @gemm_nt is aref IR (made by aref-partition): run cluster before aref-partition

// Every load depends on program_id(x): nothing for a cluster to share.
// NOTHING: error: tile.load: cluster: no tile.load of @rows is the same in every block of a cluster
// NOTHING: error: func.func: cluster: @fill loads no tile, so there is nothing to multicast
func.func @rows(%a: !tile.desc<?x64xbf16, box = [128, 64]>, %c: !tile.desc<?x64xbf16, box = [128, 64]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %bm = arith.constant 128 : index
  %c0 = arith.constant 0 : index
  %m0 = arith.muli %pid, %bm : index
  %t = tile.load %a[%m0, %c0] : !tile.desc<?x64xbf16, box = [128, 64]> -> tensor<128x64xbf16>
  tile.store %t, %c[%m0, %c0] : tensor<128x64xbf16> -> !tile.desc<?x64xbf16, box = [128, 64]>
  func.return
}

// No load at all (it was told its loads depend on program_id(x)).
func.func @fill(%c: !tile.desc<?x64xf32, box = [128, 64]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %bm = arith.constant 128 : index
  %c0 = arith.constant 0 : index
  %m0 = arith.muli %pid, %bm : index
  %v = arith.constant dense<1.500000e+00> : tensor<128x64xf32>
  tile.store %v, %c[%m0, %c0] : tensor<128x64xf32> -> !tile.desc<?x64xf32, box = [128, 64]>
  func.return
}
