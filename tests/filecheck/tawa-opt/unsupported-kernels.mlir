// Kernels that tawa-xdsl cannot compile are refused where the problem is
// written, by the first pass or the parser (found by the outside-user sweep: a
// kernel that returned a value was an internal error in aref-partition, a call
// a 'symbol table' error in tile-shape).
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p tawa-hopper-pipeline | filecheck %s

// CHECK: error: func.func: @ret returns a value; a tile kernel returns nothing and writes its outputs with tile.store
func.func @ret(%x: !tile.desc<?x?xf32, box = [64, 128]>) -> f32 attributes {tile.kernel} {
  %c = arith.constant 1.0 : f32
  func.return %c : f32
}

// -----

// CHECK: error: func.call of @helper: a tile kernel calls no functions; inline it
func.func private @helper(%a: f32) -> f32 {
  %r = arith.mulf %a, %a : f32
  func.return %r : f32
}
func.func @calls(%o: !tile.desc<?x?xf32, box = [64, 128]>, %a: f32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  // expected-error@+1 {{func.call of @helper: a tile kernel calls no functions; inline it}}
  %v = func.call @helper(%a) : (f32) -> f32
  %t = tile.splat %v : f32 -> tensor<64x128xf32>
  tile.store %t, %o[%c0, %c0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

// -----

// A tensor parameter (not a !tile.desc) was an internal error in the lowering.
// CHECK: unsupported-kernels.mlir:[[# @LINE + 1]]:1: error: func.func: parameter %x has type tensor<64xf32>; a tile kernel takes tensors as !tile.desc and scalars (index, integers, floats)
func.func @tensor_param(%x: tensor<64xf32>, %c: !tile.desc<?xf32, box = [64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  tile.store %x, %c[%c0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}

// -----

// A tensor chosen at run time (scf.if, arith.select) or carried by a loop: its
// tensor map is made once, for a parameter (these were internal errors in
// convert-aref-to-nvgpu-async).
func.func @pick_tensor(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>, %f: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  // CHECK: unsupported-kernels.mlir:[[# @LINE + 1]]:3: error: scf.if makes a !tile.desc: a tensor is a kernel parameter, loaded and stored as it is (its tensor map is made once, for that parameter); pick between tiles or stores instead of tensors
  %d = scf.if %f -> (!tile.desc<?x?xf32, box = [64, 64]>) {
    scf.yield %x : !tile.desc<?x?xf32, box = [64, 64]>
  } else {
    scf.yield %y : !tile.desc<?x?xf32, box = [64, 64]>
  }
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  tile.store %t, %d[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// -----

func.func @select_tensor(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>, %f: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  // CHECK: unsupported-kernels.mlir:[[# @LINE + 1]]:3: error: arith.select makes a !tile.desc
  %d = arith.select %f, %x, %y : !tile.desc<?x?xf32, box = [64, 64]>
  %t = tile.load %d[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  tile.store %t, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// -----

func.func @carry_tensor(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  // CHECK: unsupported-kernels.mlir:[[# @LINE + 1]]:3: error: scf.for makes a !tile.desc
  %d = scf.for %i = %c0 to %c128 step %c64 iter_args(%dd = %x) -> (!tile.desc<?x?xf32, box = [64, 64]>) {
    scf.yield %dd : !tile.desc<?x?xf32, box = [64, 64]>
  }
  %t = tile.load %d[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  tile.store %t, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// -----

// A loop counting in i64: the thread level counts in 32-bit registers (the
// -t ptx output compared an i32 register with an i64 one; -p
// distribute-fragments was an internal error).
func.func @count_i64(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>, %n: i64) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %one = arith.constant 1 : i64
  %zero = arith.constant 0 : i64
  // CHECK: unsupported-kernels.mlir:[[# @LINE + 1]]:3: error: scf.for counting in i64: a loop counts in index or i32 (a 32-bit register); give it index bounds (arith.index_cast)
  %r = scf.for %i = %zero to %n step %one iter_args(%a = %t) -> (tensor<64x64xf32>) : i64 {
    %b = arith.addf %a, %a : tensor<64x64xf32>
    scf.yield %b : tensor<64x64xf32>
  }
  tile.store %r, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
