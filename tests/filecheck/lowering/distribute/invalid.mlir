// distribute-fragments refuses what the thread level cannot express with a
// diagnostic at the op (the PTX printer's messages where it had one).
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p distribute-fragments | filecheck %s

// CHECK: error: arith.mulf: fold tile constants before lowering (run canonicalize)
func.func @k(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %a = tile.splat %x : f32 -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %b = arith.constant dense<2.0> : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    // expected-error@+1 {{fold tile constants before lowering (run canonicalize)}}
    %c = arith.mulf %a, %b : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
  }
  func.return
}

// -----

// CHECK: error: arith.truncf is supported on f32, bf16 and f16 register tiles to bf16, f16, f8E4M3FN or f8E5M2
func.func @k(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    // expected-error@+1 {{arith.truncf is supported on f32, bf16 and f16 register tiles to bf16, f16, f8E4M3FN or f8E5M2}}
    %c = arith.truncf %x : f32 to bf16
  }
  func.return
}

// -----

// CHECK: error: arith.addf on bf16 values: compute in f32 (arith.extf first, arith.truncf after)
func.func @k(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %rows = tile.iota : tensor<64xi32, #nvgpu_async.frag<row, warpgroups = 1>>
    %r2 = tile.expand_dims %rows, axis = 1 : tensor<64xi32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64x1xi32, #nvgpu_async.frag<row, warpgroups = 1>>
    %rb = tile.broadcast %r2 : tensor<64x1xi32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64x16xi32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %z = arith.constant dense<0> : tensor<64x16xi32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %top = tile.cmpi eq, %rb, %z : tensor<64x16xi32, #nvgpu_async.frag<acc, warpgroups = 1>> -> tensor<64x16xi1, #nvgpu_async.frag<acc, warpgroups = 1>>
    %xs = tile.splat %x : f32 -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %zero = arith.constant dense<0.0> : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %f = tile.select %top, %xs, %zero : tensor<64x16xi1, #nvgpu_async.frag<acc, warpgroups = 1>>, tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %h = arith.truncf %f : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<64x16xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
    // expected-error@+1 {{arith.addf on bf16 values: compute in f32 (arith.extf first, arith.truncf after)}}
    %c = arith.addf %h, %h : tensor<64x16xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
  }
  func.return
}

// -----

// CHECK: error: tile.reduce is supported on accumulator-layout tiles
func.func @k(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %a = tile.splat %x : f32 -> tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 1>>
    %e = tile.expand_dims %a, axis = 1 : tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64x1xf32, #nvgpu_async.frag<row, warpgroups = 1>>
    // expected-error@+1 {{tile.reduce is supported on accumulator-layout tiles}}
    %m = tile.reduce max %e, axis = 1 : tensor<64x1xf32, #nvgpu_async.frag<row, warpgroups = 1>> -> tensor<64xf32, #nvgpu_async.frag<row, warpgroups = 1>>
  }
  func.return
}

// -----

// CHECK: error: arith.floordivsi has no thread-level form; write it with the arith ops that do: addf, addi,
func.func @k(%x: i32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : i32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    // expected-error@+1 {{arith.floordivsi has no thread-level form}}
    %y = arith.floordivsi %x, %x : i32
  }
  func.return
}

// -----

// CHECK: error: tile.iota: per-thread tile coordinates exist in the consumer role only
func.func @k(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
    // expected-error@+1 {{per-thread tile coordinates exist in the consumer role only}}
    %rows = tile.iota : tensor<64xi32, #nvgpu_async.frag<row, warpgroups = 1>>
  } consumer {
  }
  func.return
}

// -----

// CHECK: error: func.func: parameter %x has type tensor<4xf32>; a tile kernel takes tensors as !tile.desc and scalars (index, integers, floats)
// expected-error@+1 {{parameter %x has type tensor<4xf32>; a tile kernel takes tensors as !tile.desc and scalars (index, integers, floats)}}
func.func @k(%x: tensor<4xf32>) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : tensor<4xf32>>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  func.return
}

// -----

// CHECK: error: func.func: nvgpu_async.abi lists 0 parameters, the kernel has 1
// expected-error@+1 {{nvgpu_async.abi lists 0 parameters, the kernel has 1}}
func.func @k(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  func.return
}

// -----

// A transposed view read into registers: column-major elements, which the
// accumulator layout's element pairs cannot load.
// CHECK: error: nvgpu_async.smem_load: a transposed shared tile cannot be read into registers: load the tile in the orientation the epilogue uses
func.func @k() attributes {tile.kernel, nvgpu_async.abi = [], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 9216, cluster = 1>} {
  %t = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x64x64xbf16>
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %c0 = arith.constant 0 : index
    %v = nvgpu_async.smem_slot %t[%c0] : !nvgpu_async.smem<1x64x64xbf16> -> !nvgpu_async.smem_view<64x64xbf16>
    %vt = nvgpu_async.smem_trans %v : !nvgpu_async.smem_view<64x64xbf16> -> !nvgpu_async.smem_view<64x64xbf16, transposed>
    // expected-error@+1 {{a transposed shared tile cannot be read into registers: load the tile in the orientation the epilogue uses}}
    %r = nvgpu_async.smem_load %vt : !nvgpu_async.smem_view<64x64xbf16, transposed> -> tensor<64x64xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
  }
  func.return
}

// -----

// One value per row (a vector in the row layout, a row scale) is read as f32,
// bf16 or f16, not 8-bit floats (their registers hold pairs).
// CHECK: error: nvgpu_async.smem_load: row vectors are read from shared memory as f32, bf16 or f16
func.func @k() attributes {tile.kernel, nvgpu_async.abi = [], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 2048, cluster = 1>} {
  %t = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<1x64xf8E4M3FN>
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %c0 = arith.constant 0 : index
    %v = nvgpu_async.smem_slot %t[%c0] : !nvgpu_async.smem<1x64xf8E4M3FN> -> !nvgpu_async.smem_view<64xf8E4M3FN>
    // expected-error@+1 {{row vectors are read from shared memory as f32, bf16 or f16}}
    %r = nvgpu_async.smem_load %v : !nvgpu_async.smem_view<64xf8E4M3FN> -> tensor<64xf8E4M3FN, #nvgpu_async.frag<row, warpgroups = 1>>
  }
  func.return
}
