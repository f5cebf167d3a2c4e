// A file of several kernels: each is compiled on its own, and every kernel a
// stage refuses is reported, one located line each naming its kernel, with
// exit status 1 (it stopped at the first, unnamed). Found by the outside-user
// sweep. Arithmetic on bf16 tiles (registers hold them in pairs) is refused
// by the first pass, not only at -t ptx (math.absf crashed the printer).
// RUN: not tawa-opt %s -p tawa-hopper-pipeline -t ptx 2>&1 | filecheck %s
// CHECK: tawa-opt: {{.*}}kernels.mlir:[[# @LINE + 11]]:3: error: math.atan has no thread-level form {{.*}} (in kernel @atan)
// CHECK-NEXT: tawa-opt: {{.*}}kernels.mlir:[[# @LINE + 26]]:3: error: math.absf on bf16 values: compute in f32 (arith.extf first, arith.truncf after) (in kernel @half)
// CHECK-NOT: tawa-opt

// RUN: not tawa-opt %S/Inputs/two-nvgpu-kernels.mlir -t ptx 2>&1 | filecheck %s --check-prefix=PTX
// PTX: tawa-opt: {{.*}}two-nvgpu-kernels.mlir:8:5: error: arith.addf on bf16 values: {{.*}} (in kernel @first)
// PTX-NEXT: tawa-opt: {{.*}}two-nvgpu-kernels.mlir:18:5: error: math.absf on bf16 values: {{.*}} (in kernel @second)

func.func @atan(%x: !tile.desc<?x?xf32, box = [64, 128]>, %o: !tile.desc<?x?xf32, box = [64, 128]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 128]> -> tensor<64x128xf32>
  %e = math.atan %t : tensor<64x128xf32>
  tile.store %e, %o[%c0, %c0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

func.func @fine(%x: !tile.desc<?x?xf32, box = [64, 128]>, %o: !tile.desc<?x?xf32, box = [64, 128]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 128]> -> tensor<64x128xf32>
  %e = math.exp %t : tensor<64x128xf32>
  tile.store %e, %o[%c0, %c0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

func.func @half(%x: !tile.desc<?x?xbf16, box = [64, 128]>, %o: !tile.desc<?x?xbf16, box = [64, 128]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 128]> -> tensor<64x128xbf16>
  %e = math.absf %t : tensor<64x128xbf16>
  tile.store %e, %o[%c0, %c0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}
