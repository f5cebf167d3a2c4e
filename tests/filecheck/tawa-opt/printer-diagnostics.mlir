// What the thread level cannot lower is reported at the source line of the op
// the lowering made it from, not without a location.
// RUN: not tawa-opt %s -p tawa-hopper-pipeline -t ptx 2>&1 | filecheck %s

func.func @copy(%a: !tile.desc<?x?xbf16, box = [128, 64]>, %c: !tile.desc<?x?xbf16, box = [128, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
  %u = arith.addf %t, %t : tensor<128x64xbf16>
  tile.store %u, %c[%c0, %c0] : tensor<128x64xbf16> -> !tile.desc<?x?xbf16, box = [128, 64]>
  func.return
}
// CHECK: tawa-opt: {{.*}}printer-diagnostics.mlir:8:3: error: arith.addf on bf16 values: compute in f32 (arith.extf first, arith.truncf after)
