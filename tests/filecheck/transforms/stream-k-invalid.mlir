// Beyond split-k's checks (the same analysis), stream-k needs tiles of equal
// work and a tile grid it can read off the store.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p 'stream-k' | filecheck %s
// RUN: not tawa-opt %examples/gemm.mlir -p 'stream-k{group-m=0}' 2>&1 | filecheck %s --check-prefix=GROUP

// GROUP: stream-k: group-m must be at least 1, got 0

func.func @causal(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %pid = tile.program_id x
  %m0 = arith.muli %pid, %c64 : index
  %end = arith.addi %m0, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %end step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %x, %c[%m0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: scf.for: stream-k: the K loop's bounds depend on tile.program_id, so tiles differ in work; stream-K shares equal tiles (split-k slices any K loop)

// -----

func.func @no_grid(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %pid = tile.program_id x
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%pid, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %x, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: tile.store: stream-k: kernel @no_grid: cannot tell how many programs axis x needs: {{.*}}; stream-K counts the output tiles by that rule
