// Nonsense options and unpartitioned input get a clear error and exit code 1.
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline{num-stages=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline{num-stages=2 mma-depth=3}' 2>&1 | filecheck %s --check-prefix=DEEP
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline{num-stages=2 mma-depth=0}' 2>&1 | filecheck %s --check-prefix=NOMMA
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline{num-stages=2 mma-depth=2 two-stage=true}' 2>&1 | filecheck %s --check-prefix=TWO
// RUN: not tawa-opt %examples/gemm.mlir -p 'pipeline' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not tawa-opt %examples/gemm.mlir -p 'pipeline{stages=3}' 2>&1 | filecheck %s --check-prefix=NAME

// ZERO: tawa-opt: pipeline: num-stages must be at least 1, got 0
// DEEP: tawa-opt: pipeline: mma-depth must be between 1 and num-stages (2), got 3: each MMA in flight holds a slot
// NOMMA: tawa-opt: pipeline: mma-depth must be between 1 and num-stages (2), got 0
// TWO: tawa-opt: pipeline: two-stage holds mma-depth + 1 = 3 slots; num-stages is 2
// ORDER: tawa-opt: {{.*}}gemm.mlir:9:1: error: func.func: pipeline takes aref IR (made by aref-partition), but kernel @gemm_nt is tile IR: run aref-partition first
// NAME: tawa-opt: pipeline{stages=3}: pipeline has no option 'stages' (it takes num-stages, mma-depth, two-stage, outer-stages)
