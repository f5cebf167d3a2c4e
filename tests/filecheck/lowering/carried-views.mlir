// A loaded tile that a loop carries or a branch yields stays a shared-memory view
// only when every value copied into it is one and no tile.store reads it; else it
// is a register tile, the loaded tile read out of its slot (nvgpu_async.smem_load)
// where it enters it: before the loop, at the yield of the branch that passes it on.
// Both were refused ("cannot read the shared tile %v here"; an accumulator starting
// from a loaded tile: "tile.store of %acc, a loaded tile carried through a loop").
// RUN: tawa-opt %S/../../kernels/rows_outside3.mlir -p 'aref-partition,convert-aref-to-nvgpu-async' | filecheck %s
// RUN: tawa-opt %S/../../kernels/gemm_outside3.mlir -p 'aref-partition,convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=ACC
// RUN: tawa-opt %s -p 'aref-partition,convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=VIEW

// CHECK-LABEL: func.func @halve_loop(
// CHECK:         } consumer {
// CHECK:           %[[X:.*]] = nvgpu_async.smem_load %{{.*}} : !nvgpu_async.smem_view<64x64xf32> -> tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:      scf.for {{.*}} iter_args(%{{.*}} = %[[X]]) -> (tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>)

// CHECK-LABEL: func.func @halve_while(
// CHECK:         } consumer {
// CHECK:           %[[W:.*]] = nvgpu_async.smem_load %{{.*}} : !nvgpu_async.smem_view<64x64xf32> -> tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:      scf.while (%{{.*}} = %[[W]], %{{.*}} = %{{.*}}) : (tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>, i32)

// CHECK-LABEL: func.func @scale_unless(
// CHECK:         } consumer {
// CHECK:           scf.if %{{.*}} -> (tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>) {
// CHECK-NEXT:        %[[T:.*]] = nvgpu_async.smem_load %{{.*}} : !nvgpu_async.smem_view<64x64xf32> -> tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:        scf.yield %[[T]]

// A carried view a store reads is read out of its slot before the loop as well.
// CHECK-LABEL: func.func @store_carried(
// CHECK:         } consumer {
// CHECK:           %[[S:.*]] = nvgpu_async.smem_load %{{.*}} : !nvgpu_async.smem_view<64x64xf32> -> tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:      scf.for {{.*}} iter_args(%{{.*}} = %[[S]], %{{.*}} = %{{.*}}) -> (tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>, tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>)

// ACC-LABEL: func.func @gemm_acc_init(
// ACC:         } consumer {
// ACC:           %[[C:.*]] = nvgpu_async.smem_load %{{.*}} : !nvgpu_async.smem_view<128x128xf32> -> tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// ACC:           scf.for {{.*}} iter_args(%{{.*}} = %[[C]]

// A loop that carries the loaded tile unchanged carries the view; its register
// sum is what reads it.
// VIEW-LABEL: func.func @carry_view(
// VIEW:         } consumer {
// VIEW-NOT:       nvgpu_async.smem_load
// VIEW:           scf.for {{.*}} -> (!nvgpu_async.smem_view<64x64xf32>, tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>)
// VIEW:             nvgpu_async.smem_load
// VIEW:             arith.addf
func.func @carry_view(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %v, %s = scf.for %i = %c0 to %n step %c1 iter_args(%vv = %t, %ss = %zero) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
    %s2 = arith.addf %ss, %vv : tensor<64x64xf32>
    scf.yield %vv, %s2 : tensor<64x64xf32>, tensor<64x64xf32>
  }
  %r = arith.addf %s, %v : tensor<64x64xf32>
  tile.store %r, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
