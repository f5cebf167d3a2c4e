// tawa-hopper-pipeline runs tile-shape, reverse-grid, cluster and persistent
// itself, with the options it resolves for the kernel as written: a kernel one
// of them already reworked is refused at the kernel, naming the option to use
// (it was refused by an inner tile-shape the user never wrote, or lowered with
// options resolved for the wrong kernel: a dynamic persistent GEMM's rings
// overflowed shared memory).
// RUN: not tawa-opt %examples/attention.mlir -p 'reverse-grid,tawa-hopper-pipeline' 2>&1 | filecheck %s --check-prefix=REVERSED
// RUN: not tawa-opt %examples/gemm_epilogue.mlir -p 'persistent{dynamic=true},tawa-hopper-pipeline' 2>&1 | filecheck %s --check-prefix=PERSISTENT
// RUN: not tawa-opt %examples/gemm.mlir -p 'cluster{size=4},tawa-hopper-pipeline{tuned=false}' 2>&1 | filecheck %s --check-prefix=CLUSTER
// RUN: tawa-opt %examples/gemm.mlir -p 'split-k{splits=2},tawa-hopper-pipeline' | filecheck %s --check-prefix=SPLIT
// An option out of range against one the pipeline resolved is refused at each
// kernel, saying where each value came from (it said `pipeline: ... num-stages
// is 3`, unlocated, of a num-stages nobody gave).
// RUN: not tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{mma-depth=7}' 2>&1 | filecheck %s --check-prefix=RESOLVED

// REVERSED: attention.mlir:{{[0-9]+}}:1: error: func.func: tawa-hopper-pipeline: kernel @attention_d64 went through reverse-grid, which the pipeline runs itself (after tile-shape): give it the kernel before reverse-grid and the option reverse-x=true
// REVERSED-NOT: tile-shape:
// PERSISTENT: gemm_epilogue.mlir:{{[0-9]+}}:1: error: func.func: tawa-hopper-pipeline: kernel @gemm_residual_gelu went through persistent, which the pipeline runs itself (after tile-shape): give it the kernel before persistent and the option persistent=true
// PERSISTENT-NOT: shared memory
// CLUSTER: gemm.mlir:{{[0-9]+}}:1: error: func.func: tawa-hopper-pipeline: kernel @gemm_nt went through cluster, which the pipeline runs itself (after tile-shape): give it the kernel before cluster and the option cluster=4
// RESOLVED: gemm.mlir:{{[0-9]+}}:1: error: func.func: pipeline: mma-depth must be between 1 and num-stages ([[N:[0-9]+]]), got 7: each MMA in flight holds a slot (options for @gemm_nt: num-stages=[[N]] tuned, mma-depth=7 given, two-stage=false default, outer-stages=2 default)
// split-k and stream-k come before the pipeline, which lowers both kernels
// SPLIT: func.func @gemm_nt_split_k(
// SPLIT: func.func @gemm_nt_split_k_reduce(
