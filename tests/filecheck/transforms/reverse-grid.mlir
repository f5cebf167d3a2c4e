// reverse-grid: program ids along one axis are relabelled so the last tile
// starts first; the grid the stores showed is recorded before they stop showing it.
// RUN: tawa-opt %examples/gemm.mlir -p 'reverse-grid' | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p 'reverse-grid{axis=y}' | filecheck %s --check-prefix=AXIS-Y
// RUN: tawa-opt %examples/gemm.mlir -p 'reverse-grid,persistent' | filecheck %s --check-prefix=PERSISTENT
// RUN: tawa-opt %examples/attention.mlir -p 'tawa-hopper-pipeline{tuned=false reverse-x=true num-consumers=2 two-stage=true mma-depth=1}' -t ptx | filecheck %s --check-prefix=PTX
// RUN: not tawa-opt %examples/gemm.mlir -p 'reverse-grid{axis=w}' 2>&1 | filecheck %s --check-prefix=AXIS
// RUN: not tawa-opt %examples/gemm.mlir -p 'persistent,reverse-grid' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{reverse-x=true persistent=true}' 2>&1 | filecheck %s --check-prefix=PIPELINE

// x counts down from num_programs(x) - 1; y is left alone. The rule is the
// written one: (axis, stored argument, dimension, block) for x and y.
// CHECK-LABEL: func.func @gemm_nt
// CHECK-SAME:    tile.grid = {{\[}}[0 : i64, 2 : i64, 0 : i64, 128 : i64], [1 : i64, 2 : i64, 1 : i64, 128 : i64]]
// CHECK-NEXT:    %[[RAW:.*]] = tile.program_id x
// CHECK-NEXT:    %[[N:.*]] = tile.num_programs x
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT:    %[[LAST:.*]] = arith.subi %[[N]], %[[ONE]]
// CHECK-NEXT:    %pid_m = arith.subi %[[LAST]], %[[RAW]]
// CHECK-NEXT:    %pid_n = tile.program_id y
// CHECK:         arith.muli %pid_m, %bm

// AXIS-Y-LABEL: func.func @gemm_nt
// AXIS-Y:         %pid_m = tile.program_id x
// AXIS-Y-NEXT:    %[[RAW:.*]] = tile.program_id y
// AXIS-Y-NEXT:    %[[N:.*]] = tile.num_programs y
// AXIS-Y:         %pid_n = arith.subi %{{.*}}, %[[RAW]]

// persistent keeps the recorded rule and replaces num_programs(x) by the tile
// count, so its walk visits x from the last tile.
// PERSISTENT-LABEL: func.func @gemm_nt
// PERSISTENT-SAME:    tile.persistent = {{\[}}[0 : i64, 2 : i64, 0 : i64, 128 : i64], [1 : i64, 2 : i64, 1 : i64, 128 : i64]]
// PERSISTENT:         %[[TX:tiles_x]] = arith.ceildivui
// PERSISTENT:         scf.for
// PERSISTENT:           %pid_x = arith.addi
// PERSISTENT:           %[[LAST:.*]] = arith.subi %[[TX]], %{{.*}}
// PERSISTENT-NEXT:      %pid_m = arith.subi %[[LAST]], %pid_x

// In PTX the reversed id reads the grid extent.
// PTX-LABEL: .visible .entry attention_causal_d128(
// PTX:         mov.u32 %{{r[0-9]+}}, %nctaid.x;

// AXIS: tawa-opt: reverse-grid: axis must be one of x, y, z, got 'w'
// ORDER: error: func.func: reverse-grid: kernel @gemm_nt is already persistent; run reverse-grid before persistent (or use persistent{longest-first=true})
// PIPELINE: tawa-opt: tawa-hopper-pipeline{reverse-x=true persistent=true}: options persistent=True and reverse_x=True: reverse_x orders how the GPU starts the programs of a grid; a persistent kernel walks its tiles itself (use longest_first)
