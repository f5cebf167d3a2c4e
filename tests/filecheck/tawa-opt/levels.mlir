// Each pass takes one IR level (tawa_xdsl/analysis/levels.py) and refuses a
// kernel above or below it at the kernel, naming the pass and the level; found
// by the outside-user sweep (the tile passes answered lowered IR with
// 'tile-shape: does not know how nvgpu_async.wgmma relates tile shapes').
// RUN: not tawa-opt %examples/gemm.mlir -p tawa-hopper-pipeline,tawa-hopper-pipeline 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: tawa-opt %examples/gemm.mlir -p tawa-hopper-pipeline | not tawa-opt -p aref-partition 2>&1 | filecheck %s --check-prefix=PARTITION
// RUN: tawa-opt %examples/gemm.mlir -p tawa-hopper-pipeline | not tawa-opt -p tile-shape 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: tawa-opt %examples/gemm.mlir -p tawa-hopper-pipeline,distribute-fragments | not tawa-opt -p distribute-fragments 2>&1 | filecheck %s --check-prefix=DISTRIBUTE
// RUN: not tawa-opt %examples/gemm.mlir -p ptx-allocate 2>&1 | filecheck %s --check-prefix=BELOW
// RUN: not tawa-opt %examples/gemm.mlir -p select-store-path 2>&1 | filecheck %s --check-prefix=STORES
// TWICE: tawa-opt: {{.*}}gemm.mlir:9:1: error: func.func: tawa-hopper-pipeline takes tile IR, but kernel @gemm_nt is nvgpu_async IR (made by convert-aref-to-nvgpu-async): it is lowered already
// PARTITION: tawa-opt: stdin:2:3: error: func.func: aref-partition takes tile IR, but kernel @gemm_nt is nvgpu_async IR (made by convert-aref-to-nvgpu-async): it is lowered already
// SHAPE: tawa-opt: stdin:2:3: error: func.func: tile-shape takes tile IR, but kernel @gemm_nt is nvgpu_async IR (made by convert-aref-to-nvgpu-async): run tile-shape before aref-partition
// DISTRIBUTE: tawa-opt: stdin:2:3: error: func.func: distribute-fragments takes nvgpu_async IR (made by convert-aref-to-nvgpu-async), but kernel @gemm_nt is thread-level IR (made by distribute-fragments): it is lowered already
// BELOW: tawa-opt: {{.*}}gemm.mlir:9:1: error: func.func: ptx-allocate takes thread-level IR (made by distribute-fragments), but kernel @gemm_nt is tile IR: run distribute-fragments first
// STORES: tawa-opt: {{.*}}gemm.mlir:9:1: error: func.func: select-store-path takes nvgpu_async IR (made by convert-aref-to-nvgpu-async), but kernel @gemm_nt is tile IR: run convert-aref-to-nvgpu-async first

// A math op no level lowers is refused where it is written, by the first pass
// (it was taken down to -t ptx, whose message named no alternative).
// RUN: not tawa-opt %s -p tile-shape 2>&1 | filecheck %s --check-prefix=MATH
// RUN: not tawa-opt %s -p tawa-hopper-pipeline 2>&1 | filecheck %s --check-prefix=MATH
// MATH: tawa-opt: {{.*}}levels.mlir:[[# @LINE + 7]]:3: error: math.atan has no thread-level form (PTX has no instruction for it); write it with the math ops that do: absf, ceil, copysign, cos, erf, exp, exp2, floor, fma, log, log10, log2, roundeven, rsqrt, sin, sqrt, tanh, trunc
func.func @atan(%x: !tile.desc<?x?xf32, box = [64, 128]>, %o: !tile.desc<?x?xf32, box = [64, 128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [64, 128]> -> tensor<64x128xf32>
  %e = math.atan %t : tensor<64x128xf32>
  tile.store %e, %o[%m0, %c0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}
