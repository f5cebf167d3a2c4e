// The launch contract tawa-hopper-pipeline leaves on a kernel, as typed
// attributes: one #nvgpu_async.param per parameter (how the launch fills it
// from the tile-level arguments, and its type) and the #nvgpu_async.launch;
// both parse back (the second RUN line prints the printed IR again).
// RUN: tawa-opt %examples/gemm.mlir -p tawa-hopper-pipeline | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p tawa-hopper-pipeline | tawa-opt | filecheck %s

// A, B and C are TMA tensor maps of arguments 0, 1 and 2; K (extent 1 of A) and
// C's two extents are index parameters.
// CHECK-LABEL: func.func @gemm_nt(
// CHECK-SAME:    tile.persistent = {{\[}}[0 : i64, 2 : i64, 0 : i64, 128 : i64], [1 : i64, 2 : i64, 1 : i64, 256 : i64]]
// CHECK-SAME:    nvgpu_async.abi = [
// CHECK-SAME:      #nvgpu_async.param<map 0 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>,
// CHECK-SAME:      #nvgpu_async.param<dim 0 axis 1 : index>,
// CHECK-SAME:      #nvgpu_async.param<map 1 : !nvgpu_async.tensor_map<?x?xbf16, box = [256, 64], swizzle = 128>>,
// CHECK-SAME:      #nvgpu_async.param<map 2 : !nvgpu_async.tensor_map<?x?xbf16, box = [128, 64], swizzle = 128>>,
// CHECK-SAME:      #nvgpu_async.param<dim 2 axis 0 : index>,
// CHECK-SAME:      #nvgpu_async.param<dim 2 axis 1 : index>]
// A producer and two consumer warpgroups, the rings and barriers plus 1024
// bytes of alignment slack, no clusters.
// CHECK-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = 214064, cluster = 1>
