// xDSL's cleanups run on tile IR from the command line and keep the kernels whole.
// RUN: tawa-opt %examples/gemm.mlir -p canonicalize,cse,dce | filecheck %s
// RUN: tawa-opt %examples/attention.mlir -p cse,canonicalize | filecheck %s --check-prefix=ATTN

// CHECK-LABEL: func.func @gemm_nt
// CHECK:         scf.for
// CHECK:           tile.load %a
// CHECK:           tile.load %b
// CHECK:           tile.trans
// CHECK:           tile.dot
// CHECK:         arith.truncf
// CHECK-NEXT:    tile.store
// CHECK-LABEL: func.func @gemm_nn
// CHECK-NOT:     tile.trans
// CHECK:         tile.store

// ATTN-LABEL: func.func @attention_causal_d64
// ATTN:         scf.for
// ATTN-COUNT-2:   tile.dot
// ATTN:         scf.for
// ATTN-COUNT-2:   tile.select
// ATTN:         tile.store
