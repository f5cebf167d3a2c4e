// select-store-path lists on every register store the paths its stores may take
// at run time, most specialised first: 16-byte vectors only for 16-bit tiles of
// whole 32-column groups, then element pairs, then single elements (the
// fallback). A store that lists its paths keeps them; vec16=false leaves the
// 16-byte path out. The verifier refuses lists distribution could not honour.
// RUN: tawa-opt %s --split-input-file -p select-store-path | filecheck %s
// RUN: tawa-opt %s --split-input-file -p 'select-store-path{vec16=false}' | filecheck %s --check-prefix=NOVEC
// RUN: tawa-opt %s --split-input-file -p select-store-path | tawa-opt --split-input-file | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{tma-store=false},select-store-path' | filecheck %s --check-prefix=PIPE
// RUN: tawa-opt %S/Inputs/store-paths-invalid.mlir --split-input-file --verify-diagnostics | filecheck %S/Inputs/store-paths-invalid.mlir

// CHECK-LABEL: func.func @paths
// CHECK:         nvgpu_async.store_global %v, %c[%i, %i] paths ["vec16", "pair", "single"] : tensor<128x128xbf16,
// CHECK-NEXT:    nvgpu_async.store_global %h, %c16[%i, %i] paths ["vec16", "pair", "single"] : tensor<64x64xf16,
// CHECK-NEXT:    nvgpu_async.store_global %w, %c[%i, %i] paths ["pair", "single"] : tensor<64x48xbf16,
// CHECK-NEXT:    nvgpu_async.store_global %x, %f[%i, %i, %i] paths ["pair", "single"] : tensor<128x128xf32,
// CHECK-NEXT:    nvgpu_async.store_global %v, %c[%i, %i] paths ["single"] : tensor<128x128xbf16,
// NOVEC-LABEL: func.func @paths
// NOVEC:         nvgpu_async.store_global %v, %c[%i, %i] paths ["pair", "single"] : tensor<128x128xbf16,
// NOVEC-NEXT:    nvgpu_async.store_global %h, %c16[%i, %i] paths ["pair", "single"] : tensor<64x64xf16,
// NOVEC-NEXT:    nvgpu_async.store_global %w, %c[%i, %i] paths ["pair", "single"] : tensor<64x48xbf16,
// NOVEC-NEXT:    nvgpu_async.store_global %x, %f[%i, %i, %i] paths ["pair", "single"] : tensor<128x128xf32,
// NOVEC-NEXT:    nvgpu_async.store_global %v, %c[%i, %i] paths ["single"] : tensor<128x128xbf16,
func.func @paths(%c: !nvgpu_async.global<?x?xbf16>, %c16: !nvgpu_async.global<?x?xf16>,
    %f: !nvgpu_async.global<?x?x?xf32>, %i: index,
    %v: tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>>,
    %h: tensor<64x64xf16, #nvgpu_async.frag<acc, warpgroups = 1>>,
    %w: tensor<64x48xbf16, #nvgpu_async.frag<acc, warpgroups = 1>>,
    %x: tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>>) {
  nvgpu_async.store_global %v, %c[%i, %i] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>> -> !nvgpu_async.global<?x?xbf16>
  nvgpu_async.store_global %h, %c16[%i, %i] : tensor<64x64xf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.global<?x?xf16>
  nvgpu_async.store_global %w, %c[%i, %i] : tensor<64x48xbf16, #nvgpu_async.frag<acc, warpgroups = 1>> -> !nvgpu_async.global<?x?xbf16>
  nvgpu_async.store_global %x, %f[%i, %i, %i] : tensor<128x128xf32, #nvgpu_async.frag<acc, warpgroups = 2>> -> !nvgpu_async.global<?x?x?xf32>
  nvgpu_async.store_global %v, %c[%i, %i] paths ["single"] : tensor<128x128xbf16, #nvgpu_async.frag<acc, warpgroups = 2>> -> !nvgpu_async.global<?x?xbf16>
  func.return
}

// The register epilogue of the Hopper pipeline (TMA stores off): the GEMM's
// bf16 output takes all three.
// PIPE:     nvgpu_async.store_global {{.*}} paths ["vec16", "pair", "single"] : tensor<128x{{[0-9]+}}xbf16,
