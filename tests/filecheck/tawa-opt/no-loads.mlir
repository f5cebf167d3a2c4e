// A kernel that loads nothing is still warp-specialized and lowered: the
// producer role has nothing to do, the consumer computes and stores.
// RUN: tawa-opt %s -p aref-partition | filecheck %s
// RUN: tawa-opt %s -p tawa-hopper-pipeline -t ptx | filecheck %s --check-prefix=PTX

func.func @fill(%c: !tile.desc<?x?xbf16, box = [128, 128]>, %x: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %bm = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %t = tile.splat %x : f32 -> tensor<128x128xf32>
  %t16 = arith.truncf %t : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %t16, %c[%m0, %m0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @ones(%c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %one = arith.constant dense<1.000000e+00> : tensor<128x128xbf16>
  tile.store %one, %c[%c0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// CHECK-LABEL: func.func @fill
// CHECK:         aref.warp_specialize consumers = 1 producer {
// CHECK-NOT:       tile.store
// CHECK:         } consumer {
// CHECK:           tile.store
// CHECK-LABEL: func.func @ones
// CHECK:         aref.warp_specialize

// A uniform tile is written into registers before it is staged for the store.
// PTX-LABEL: .entry fill(
// PTX:         cvt.rn.bf16x2.f32
// PTX:         cp.async.bulk.tensor
// PTX-LABEL: .entry ones(
// PTX:         mov.f32 [[ONE:%f[0-9]+]], 0f3F800000;
// PTX:         cvt.rn.bf16x2.f32 %r{{[0-9]+}}, [[ONE]], [[ONE]];
