// xDSL's cleanups run on tile IR from the command line and keep the kernels whole.
// RUN: tawa-opt %examples/gemm.mlir -p canonicalize,cse,dce | filecheck %s
// RUN: tawa-opt %examples/attention.mlir -p cse,canonicalize | filecheck %s --check-prefix=ATTN
// At the thread level too: a barrier wait whose flag only its own loop reads
// is no dead code (dce, cse and canonicalize deleted both roles' waits, and the
// producer overwrote slots the consumers still read).
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{tuned=false},distribute-fragments,dce' | filecheck %s --check-prefix=THREAD
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{tuned=false},distribute-fragments,canonicalize,cse' | filecheck %s --check-prefix=THREAD

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

// THREAD-LABEL: func.func @gemm_nt
// THREAD:         ptx.for
// THREAD:           ptx.mbarrier_wait
// THREAD:           ptx.tma_load
// THREAD:         ptx.for
// THREAD:           ptx.mbarrier_wait
// THREAD:           ptx.wgmma
// THREAD-LABEL: func.func @gemm_nn
