// convert-aref-to-nvgpu-async on a column reduction (tile.reduce along axis 0):
// the plan places the scratch its warps' partials meet in after the rings and
// the staging tile (one
// f32 row of 64 columns per consumer warp: 4 x 64 x 4 = 1024 bytes), counts it
// in the launch, and the reduction becomes nvgpu_async.column_reduce into the
// column layout its broadcast reads.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p convert-aref-to-nvgpu-async | filecheck %s

// CHECK-LABEL: func.func @column_sums
// CHECK-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 34848, cluster = 1>
// CHECK-NEXT:    %ra = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x64x64xbf16>
// CHECK-NEXT:    %rb = nvgpu_async.smem_alloc offset = 8192 : !nvgpu_async.smem<1x64x64xbf16>
// CHECK-NEXT:    %c_staging = nvgpu_async.smem_alloc offset = 16384 : !nvgpu_async.smem<1x64x64xf32>
// CHECK-NEXT:    %column_scratch = nvgpu_async.smem_alloc offset = 32768 : !nvgpu_async.smem<1x256xf32>
// CHECK-NEXT:    %ra_full = nvgpu_async.mbarrier_alloc offset = 33792 : !nvgpu_async.mbarrier<1>
// CHECK:         %r = nvgpu_async.column_reduce sum %d, %column_scratch : tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>, !nvgpu_async.smem<1x256xf32> -> tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 1>>
// CHECK-NEXT:    %e = tile.expand_dims %r, axis = 0 : tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 1>> -> tensor<1x64xf32, #nvgpu_async.frag<col, warpgroups = 1>>
// CHECK-NEXT:    %bb = tile.broadcast %e : tensor<1x64xf32, #nvgpu_async.frag<col, warpgroups = 1>> -> tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
func.func @column_sums(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %r = tile.reduce sum %d, axis = 0 : tensor<64x64xf32> -> tensor<64xf32>
      %e = tile.expand_dims %r, axis = 0 : tensor<64xf32> -> tensor<1x64xf32>
      %bb = tile.broadcast %e : tensor<1x64xf32> -> tensor<64x64xf32>
      tile.store %bb, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// Rings that fit alone (229,376 bytes of the 231,424 a block's allocations may
// take) but not with the scratch of a 256-column reduction: refused, the
// scratch named.
// CHECK: column-reduce.mlir:[[# @LINE + 1]]:1: error: func.func: convert-aref-to-nvgpu-async: the aref rings and the column reductions' scratch (4096 bytes) need 233504 bytes of shared memory; a block can have 231424. Use fewer stages or smaller tiles
func.func @no_room(%x: !tile.desc<?x?xf32, box = [192, 256]>, %y: !tile.desc<?x?xf32, box = [64, 128]>, %o: !tile.desc<?x?xf32, box = [1, 256]>, %o2: !tile.desc<?x?xf32, box = [1, 128]>) attributes {tile.kernel} {
    %rx = aref.create : !aref.aref<[tensor<192x256xf32>], depth = 1>
    %ry = aref.create : !aref.aref<[tensor<64x128xf32>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %tx = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [192, 256]> -> tensor<192x256xf32>
      aref.put %rx[%i], %tx : !aref.aref<[tensor<192x256xf32>], depth = 1>
      %ty = tile.load %y[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 128]> -> tensor<64x128xf32>
      aref.put %ry[%i], %ty : !aref.aref<[tensor<64x128xf32>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %tx = aref.get %rx[%i] : !aref.aref<[tensor<192x256xf32>], depth = 1>
      %ty = aref.get %ry[%i] : !aref.aref<[tensor<64x128xf32>], depth = 1>
      %s = tile.reduce sum %tx, axis = 0 : tensor<192x256xf32> -> tensor<256xf32>
      %t = tile.reduce max %ty, axis = 0 : tensor<64x128xf32> -> tensor<128xf32>
      aref.consumed %rx[%i] : !aref.aref<[tensor<192x256xf32>], depth = 1>
      aref.consumed %ry[%i] : !aref.aref<[tensor<64x128xf32>], depth = 1>
      tile.store %s, %o[%c0, %c0] : tensor<256xf32> -> !tile.desc<?x?xf32, box = [1, 256]>
      tile.store %t, %o2[%c0, %c0] : tensor<128xf32> -> !tile.desc<?x?xf32, box = [1, 128]>
    }
    func.return
}

// -----

// A bf16 tile is reduced in f32, as the interpreter reduces it: extended in
// registers, reduced along its columns through the scratch (or along its rows
// in the quads), the result rounded to bf16 once.
// CHECK-LABEL: func.func @bf16_sums
// CHECK:         %[[T:.*]] = nvgpu_async.smem_load %t : !nvgpu_async.smem_view<64x64xbf16> -> tensor<64x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:    %[[W:.*]] = arith.extf %[[T]] : tensor<64x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:    %[[C:.*]] = nvgpu_async.column_reduce sum %[[W]], %column_scratch : tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>, !nvgpu_async.smem<1x256xf32> -> tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 1>>
// CHECK-NEXT:    %[[CB:.*]] = arith.truncf %[[C]] : tensor<64xf32, #nvgpu_async.frag<col, warpgroups = 1>> to tensor<64xbf16, #nvgpu_async.frag<col, warpgroups = 1>>
// CHECK:         %[[RW:.*]] = arith.extf %{{.*}} : tensor<64x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
// CHECK-NEXT:    %[[R:.*]] = tile.reduce max %[[RW]], axis = 1 : tensor<64x64xf32, #nvgpu_async.frag<acc, warpgroups = 1>> -> tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 1>>
// CHECK-NEXT:    %[[RB:.*]] = arith.truncf %[[R]] : tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 1>> to tensor<64xbf16, #nvgpu_async.frag<row, warpgroups = 1>>
// CHECK:         nvgpu_async.store_global %[[CB]], %c
// CHECK-NEXT:    nvgpu_async.store_global %[[RB]], %r
func.func @bf16_sums(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?xbf16, box = [64]>, %r: !tile.desc<?xbf16, box = [64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %t = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %cols = tile.reduce sum %t, axis = 0 : tensor<64x64xbf16> -> tensor<64xbf16>
      %rows = tile.reduce max %t, axis = 1 : tensor<64x64xbf16> -> tensor<64xbf16>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      tile.store %cols, %c[%c0] : tensor<64xbf16> -> !tile.desc<?xbf16, box = [64]>
      tile.store %rows, %r[%c0] : tensor<64xbf16> -> !tile.desc<?xbf16, box = [64]>
    }
    func.return
}
