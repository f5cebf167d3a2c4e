// Store paths distribution could not honour (run by ../select-store-path.mlir).

func.func @k(%v: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>>, %c: !nvgpu_async.global<?x?xf32>, %i: index) {
  // expected-error@+1 {{the vec16 path needs a 16-bit tile of whole 32-column groups}}
  nvgpu_async.store_global %v, %c[%i, %i] paths ["vec16", "pair", "single"] : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>> -> !nvgpu_async.global<?x?xf32>
  func.return
}
// CHECK: the vec16 path needs a 16-bit tile of whole 32-column groups

// -----

func.func @k(%v: tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>, %c: !nvgpu_async.global<?x?xbf16>, %i: index) {
  // expected-error@+1 {{the last store path is the fallback, single}}
  nvgpu_async.store_global %v, %c[%i, %i] paths ["vec16", "pair"] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>> -> !nvgpu_async.global<?x?xbf16>
  func.return
}
// CHECK: the last store path is the fallback, single

// -----

func.func @k(%v: tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>, %c: !nvgpu_async.global<?x?xbf16>, %i: index) {
  // expected-error@+1 {{most specialised first}}
  nvgpu_async.store_global %v, %c[%i, %i] paths ["pair", "vec16", "single"] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>> -> !nvgpu_async.global<?x?xbf16>
  func.return
}
// CHECK: most specialised first

// -----

func.func @k(%v: tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>, %c: !nvgpu_async.global<?x?xbf16>, %i: index) {
  // expected-error@+1 {{store paths are vec16, pair, single}}
  nvgpu_async.store_global %v, %c[%i, %i] paths ["quad"] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>> -> !nvgpu_async.global<?x?xbf16>
  func.return
}
// CHECK: store paths are vec16, pair, single
