// Two lowered kernels that the thread level refuses (arithmetic on bf16
// register tiles), for kernels.mlir's -t ptx run.
func.func @first(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %xs = tile.splat %x : f32 -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %h = arith.truncf %xs : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<64x16xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
    %c = arith.addf %h, %h : tensor<64x16xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
  }
  func.return
}

func.func @second(%x: f32) attributes {tile.kernel, nvgpu_async.abi = [#nvgpu_async.param<scalar 0 : f32>], nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 0, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
    %xs = tile.splat %x : f32 -> tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>>
    %h = arith.truncf %xs : tensor<64x16xf32, #nvgpu_async.frag<acc, warpgroups = 1>> to tensor<64x16xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
    %n = math.absf %h : tensor<64x16xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>
  }
  func.return
}
