// cooperative{num-consumers=N}: the consumer role runs on N warpgroups.
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative' | filecheck %s
// RUN: tawa-opt %examples/attention.mlir -p 'aref-partition,cooperative{num-consumers=2},pipeline{num-stages=2}' | filecheck %s --check-prefix=ATTN
// RUN: not tawa-opt %examples/gemm_epilogue.mlir -p 'aref-partition,cooperative{num-consumers=3}' 2>&1 | filecheck %s --check-prefix=ROWS
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative{num-consumers=4}' 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not tawa-opt %examples/gemm.mlir -p 'cooperative' 2>&1 | filecheck %s --check-prefix=ORDER

// Every kernel gets two consumer warpgroups (the default); nothing else changes.
// CHECK-LABEL: func.func @gemm_nt
// CHECK:         aref.warp_specialize consumers = 2 producer {
// CHECK-LABEL: func.func @gemm_nn
// CHECK:         aref.warp_specialize consumers = 2 producer {

// It composes with pipeline in either order.
// ATTN-LABEL: func.func @attention_d64
// ATTN:         aref.warp_specialize consumers = 2 producer {

// ROWS: tawa-opt: {{.*}}gemm_epilogue.mlir:{{[0-9]+}}:{{[0-9]+}}: error: tile.dot: cooperative: M = 128 rows cannot be split into 64-row wgmma blocks over 3 warpgroups
// COUNT: tawa-opt: cooperative: num-consumers must be 1, 2 or 3, got 4
// ORDER: tawa-opt: {{.*}}gemm.mlir:9:1: error: func.func: cooperative takes aref IR (made by aref-partition), but kernel @gemm_nt is tile IR: run aref-partition first
