// A tile kernel without a tile.store has no observable effect (its launch
// would do nothing): the first pass, and compile(), refuse it at the kernel.
// Parsing and printing it is fine (the dialect tests write such kernels).
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p aref-partition | filecheck %s
// RUN: not tawa-opt %s --split-input-file -p tawa-hopper-pipeline 2>&1 | filecheck %s --check-prefix=EXIT
// RUN: tawa-opt %s --split-input-file | filecheck %s --check-prefix=PARSE

func.func @loads_only(%a: !tile.desc<?x?xbf16, box = [128, 64]>, %c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
  func.return
}
// CHECK: no-output.mlir:8:1: error: func.func: @loads_only writes no output: a tile kernel's only effect is its tile.store ops, and it has none (its launch would do nothing)
// EXIT: tawa-opt: {{.*}}no-output.mlir:8:1: error: func.func: @loads_only writes no output
// PARSE-LABEL: func.func @loads_only

// -----

func.func @empty() attributes {tile.kernel} {
  func.return
}
// CHECK: no-output.mlir:19:1: error: func.func: @empty writes no output
