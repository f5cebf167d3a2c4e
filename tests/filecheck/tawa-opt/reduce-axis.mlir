// A reduction along a tile's columns (axis 0): the rows of a column are spread
// over the lanes and warps of the consumer warpgroups, so their partials meet
// in a shared-memory scratch the plan places after the rings (one f32 row of
// 64 columns per consumer warp: 8 x 64 x 4 = 2048 bytes, counted in the
// launch's shared memory), between consumer barriers (it was refused by the
// first pass). tests/test_column_reductions.py runs it lane by lane.
// RUN: tawa-opt %s -p tawa-hopper-pipeline | filecheck %s
// RUN: tawa-opt %s -p tawa-hopper-pipeline -t ptx | filecheck %s --check-prefix=PTX
// CHECK:      nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = 35856, cluster = 1>
// CHECK-NEXT:   %t_ref = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x128x64xf32>
// CHECK-NEXT:   %column_scratch = nvgpu_async.smem_alloc offset = 32768 : !nvgpu_async.smem<1x512xf32>
// CHECK-NEXT:   %t_ref_full = nvgpu_async.mbarrier_alloc offset = 34816 : !nvgpu_async.mbarrier<1>
// CHECK:        %[[T:.*]] = nvgpu_async.smem_load %t : !nvgpu_async.smem_view<128x64xf32> -> tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>
// CHECK-NEXT:   %s = nvgpu_async.column_reduce sum %[[T]], %column_scratch : tensor<128x64xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, !nvgpu_async.smem<1x512xf32> -> tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>>
// CHECK:        nvgpu_async.store_global %s, %c[%{{.*}}] : tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 2>> -> !nvgpu_async.global<?xf32>

// Each thread's 16 columns: after the shuffles across g, the first lane of each
// column stores its warp's row between two consumer barriers; consumer thread
// i (the threads past the 64 columns read the last) sums column i of the 8
// rows (256 bytes apart) into row 0, and after a third barrier every thread
// reads its 16 columns' totals.
// PTX:      shfl.sync.bfly.b32 {{.*}}, 4, 31, -1;
// PTX:      shfl.sync.bfly.b32 {{.*}}, 8, 31, -1;
// PTX:      shfl.sync.bfly.b32 {{.*}}, 16, 31, -1;
// PTX:      bar.sync 1, 256;
// PTX-NEXT: @%p{{[0-9]+}} st.shared.v2.f32 [%r{{[0-9]+}}], {%f{{[0-9]+}}, %f{{[0-9]+}}};
// PTX-COUNT-7: @%p{{[0-9]+}} st.shared.v2.f32
// PTX-NEXT: bar.sync 1, 256;
// PTX-NEXT: min.u32 %r[[COL:[0-9]+]], %r{{[0-9]+}}, 63;
// PTX:      ld.shared.f32 %f{{[0-9]+}}, [%r[[COL]]];
// PTX-COUNT-6: ld.shared.f32 %f{{[0-9]+}}, [%r[[COL]]+{{[0-9]+}}];
// PTX-NEXT: ld.shared.f32 %f{{[0-9]+}}, [%r[[COL]]+1792];
// PTX:      @%p{{[0-9]+}} st.shared.f32 [%r[[COL]]], %f{{[0-9]+}};
// PTX-NEXT: bar.sync 1, 256;
// PTX:      ld.shared.v2.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}}, [%r{{[0-9]+}}+224];
// PTX-NOT:  bar.sync
// PTX:      st.global
func.func @column_sums(%a: !tile.desc<?x?xf32, box = [128, 64]> {tile.dims = ["M", "N"]},
    %c: !tile.desc<?xf32, box = [64]> {tile.dims = ["N"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n0 = arith.muli %pid, %c64 : index
  %t = tile.load %a[%c0, %n0] : !tile.desc<?x?xf32, box = [128, 64]> -> tensor<128x64xf32>
  %s = tile.reduce sum %t, axis = 0 : tensor<128x64xf32> -> tensor<64xf32>
  tile.store %s, %c[%n0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
