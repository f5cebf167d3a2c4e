// The ops split-k makes carry the locations of the ops they stand for, so a
// later pass refusing one points into the source: the reduce kernel's load of
// the partial sums is at the store that wrote them (it was `error:` with no
// location at all).
// RUN: not tawa-opt %examples/gemm.mlir -p 'split-k{splits=2},cluster' 2>&1 | filecheck %s

// CHECK: gemm.mlir:30:3: error: tile.load: cluster: no tile.load of @gemm_nt_split_k_reduce is the same in every block of a cluster
