// Kernels split-k cannot slice get a diagnostic at the op in the way.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p 'split-k{splits=2}' | filecheck %s
// RUN: not tawa-opt %examples/gemm.mlir -p 'split-k{splits=0}' 2>&1 | filecheck %s --check-prefix=SPLITS
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,split-k{splits=2}' 2>&1 | filecheck %s --check-prefix=PARTITIONED
// RUN: not tawa-opt %examples/gemm.mlir -p 'persistent,split-k{splits=2}' 2>&1 | filecheck %s --check-prefix=PERSISTENT
// RUN: not tawa-opt %examples/attention.mlir -p 'split-k{splits=2}' 2>&1 | filecheck %s --check-prefix=ATTENTION

// SPLITS: split-k: splits must be at least 1, got 0
// PARTITIONED: gemm.mlir:{{[0-9]+}}:1: error: func.func: split-k takes tile IR, but kernel @gemm_nt is aref IR (made by aref-partition): run split-k before aref-partition
// PERSISTENT: gemm.mlir:{{[0-9]+}}:1: error: func.func: split-k: kernel @gemm_nt went through persistent, which works on its grid; run split-k before persistent
// ATTENTION: attention.mlir:{{[0-9]+}}:{{[0-9]+}}: error: tile.dot: split-k: a second tile.dot in the K loop; only loops with one accumulating tile.dot can be split

func.func @no_dot(%a: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  tile.store %t, %a[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: func.func: split-k: kernel @no_dot has no tile.dot: no K loop to split

// -----

func.func @two_loops(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %y = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %x) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %y, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: tile.dot: split-k: a second K loop; only loops with one accumulating tile.dot can be split

// -----

// A second dot after the K loop (an MLP's down projection) is in no loop (it was
// called "a second K loop").
func.func @dot_after_loop(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %h = arith.truncf %x : tensor<64x64xf32> to tensor<64x64xbf16>
  %w = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %y = tile.dot %h, %w, %zero : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %y, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: tile.dot: split-k: a second tile.dot, outside any loop; only loops with one accumulating tile.dot can be split

// -----

func.func @nested(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  scf.for %j = %c0 to %n step %c1 {
    %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
      %t = tile.load %a[%j, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      scf.yield %d : tensor<64x64xf32>
    }
    tile.store %x, %c[%j, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  }
  func.return
}
// CHECK: error: tile.dot: split-k: the tile.dot must sit directly in an scf.for of the kernel's body (the K loop)

// -----

func.func @not_carried(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %zero : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %s = arith.maximumf %acc, %d : tensor<64x64xf32>
    scf.yield %s : tensor<64x64xf32>
  }
  tile.store %x, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: tile.dot: split-k: the tile.dot must accumulate across the K loop: its accumulator is the loop-carried value it yields

// -----

func.func @read_inside(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %h = arith.truncf %acc : tensor<64x64xf32> to tensor<64x64xbf16>
    %d = tile.dot %t, %h, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %x, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: arith.truncf: split-k: reads the accumulator inside the K loop, where a slice holds only its part of the sum

// -----

func.func @store_before_loop(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  tile.store %zero, %c[%c64, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %x, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: tile.store: split-k: the tile.store must follow the K loop in the kernel's body (a partials kernel stores only its slice's sum)

// -----

func.func @carries_a_max(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x, %m = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero, %mx = %c0) -> (tensor<64x64xf32>, index) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %mx1 = arith.maxsi %mx, %k : index
    scf.yield %d, %mx1 : tensor<64x64xf32>, index
  }
  tile.store %x, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: scf.for: split-k: the K loop carries a value other than the accumulator and counters (#1: a counter adds a loop-invariant step each iteration)

// -----

func.func @counter_after(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x, %kk = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero, %i = %c0) -> (tensor<64x64xf32>, index) {
    %t = tile.load %a[%c0, %i] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    %i1 = arith.addi %i, %c64 : index
    scf.yield %d, %i1 : tensor<64x64xf32>, index
  }
  tile.store %x, %c[%kk, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: tile.store: split-k: reads a K loop counter after the loop, where each slice ends with a different value

// -----

func.func @scalar_step(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index, %s: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s1 = arith.maxsi %s, %c1 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %s1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %x, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: scf.for: split-k: the K loop's step must be a positive constant to cut its iterations into slices

// -----

func.func @row_sums(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?xf32, box = [64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %r = tile.reduce sum %x, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
  tile.store %r, %c[%c0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
// CHECK: error: tile.store: split-k: stores a tile of another shape than the accumulator; the workspace holds accumulator tiles where a store puts its tile

// -----

func.func @late_coordinates(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %pid = tile.program_id x
  %m0 = arith.muli %pid, %c64 : index
  tile.store %x, %c[%m0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: tile.store: split-k: the store's coordinates must be computed before the K loop (the reduction reads the partial sums there)

// -----

func.func @uses_z(%a: !tile.desc<?x?x?xbf16, box = [1, 64, 64]>, %c: !tile.desc<?x?x?xf32, box = [1, 64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %batch = tile.program_id z
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%batch, %c0, %k] : !tile.desc<?x?x?xbf16, box = [1, 64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %x, %c[%batch, %c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?x?xf32, box = [1, 64, 64]>
  func.return
}
// CHECK: error: tile.program_id: split-k: the K slices take grid axis z, which the kernel uses

// -----

func.func @taken(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %d = tile.dot %t, %t, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %x, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
func.func @taken_split_k() {
  func.return
}
// CHECK: error: func.func: split-k: cannot name the kernels it makes @taken_split_k: taken
