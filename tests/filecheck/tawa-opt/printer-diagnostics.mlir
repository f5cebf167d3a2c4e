// What the PTX printer cannot print is reported at the source line of the op the
// lowering made it from, not without a location.
// RUN: not tawa-opt %s -p tawa-hopper-pipeline -t ptx 2>&1 | filecheck %s

func.func @copy(%a: !tile.desc<?x?xf32, box = [128, 64]>, %c: !tile.desc<?x?xf32, box = [128, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %u = arith.addf %t, %t : tensor<128x64xf32>
  tile.store %u, %c[%c0, %c0] : tensor<128x64xf32> -> !tile.desc<?x?xf32, box = [128, 64]>
  func.return
}
// CHECK: tawa-opt: {{.*}}printer-diagnostics.mlir:8:3: error: nvgpu_async.smem_load: only vector tiles (a bias) can be read from shared memory into registers
