// Kernels aref-partition cannot split get a diagnostic at the offending load.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p aref-partition | filecheck %s

func.func @load_under_if(%a: !tile.desc<?x?xbf16, box = [16, 16]>, %c: i1, %o: !tile.desc<?x?xbf16, box = [16, 16]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  scf.if %c {
    %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [16, 16]> -> tensor<16x16xbf16>
    tile.store %t, %o[%c0, %c0] : tensor<16x16xbf16> -> !tile.desc<?x?xbf16, box = [16, 16]>
  }
  func.return
}
// CHECK: error: tile.load inside 'scf.if' cannot be partitioned: loads may only be nested in scf.for loops

// -----

func.func @indirect(%a: !tile.desc<?x?xbf16, box = [16, 16]>, %b: !tile.desc<?x?xbf16, box = [16, 16]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [16, 16]> -> tensor<16x16xbf16>
  %e = tensor.extract %t[%c0, %c0] : tensor<16x16xbf16>
  %i = arith.fptosi %e : bf16 to i32
  %ix = arith.index_cast %i : i32 to index
  %u = tile.load %b[%ix, %c0] : !tile.desc<?x?xbf16, box = [16, 16]> -> tensor<16x16xbf16>
  tile.store %u, %b[%c0, %c0] : tensor<16x16xbf16> -> !tile.desc<?x?xbf16, box = [16, 16]>
  func.return
}
// CHECK: error: tile.load address depends on tile data (%t : tensor<16x16xbf16>); the producer can only compute addresses from scalars

// -----

func.func @escaping(%a: !tile.desc<?x?xbf16, box = [16, 16]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %z = arith.constant dense<0.0> : tensor<16x16xbf16>
  %last = scf.for %k = %c0 to %n step %c16 iter_args(%prev = %z) -> (tensor<16x16xbf16>) {
    %t = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [16, 16]> -> tensor<16x16xbf16>
    scf.yield %t : tensor<16x16xbf16>
  }
  tile.store %last, %a[%c0, %c0] : tensor<16x16xbf16> -> !tile.desc<?x?xbf16, box = [16, 16]>
  func.return
}
// CHECK: error: tile.load result is carried out of its loop iteration; an aref slot only holds it for one iteration

// -----

// A while loop may issue loads only when its condition hands its arguments on
// unchanged (so they are carried like a for loop's, as persistent{dynamic}
// writes it); here the condition advances them.
func.func @load_in_while(%a: !tile.desc<?x?xbf16, box = [16, 16]>, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %end = scf.while (%k = %c0) : (index) -> index {
    %more = arith.cmpi slt, %k, %n : index
    %k16 = arith.addi %k, %c16 : index
    scf.condition(%more) %k16 : index
  } do {
  ^bb0(%j: index):
    %t = tile.load %a[%c0, %j] : !tile.desc<?x?xbf16, box = [16, 16]> -> tensor<16x16xbf16>
    tile.store %t, %a[%j, %c0] : tensor<16x16xbf16> -> !tile.desc<?x?xbf16, box = [16, 16]>
    %j1 = arith.addi %j, %c16 : index
    scf.yield %j1 : index
  }
  func.return
}
// CHECK: error: tile.load inside this scf.while cannot be partitioned: it must sit in the body (not the condition) of a while whose condition hands its arguments on unchanged

// -----

// The producer computes an scf.while whole (a scalar loop bound), but not one
// that reads tile data.
func.func @while_over_tile_data(%a: !tile.desc<?x?xbf16, box = [16, 16]>, %b: !tile.desc<?x?xbf16, box = [16, 16]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [16, 16]> -> tensor<16x16xbf16>
  %end = scf.while (%k = %c0) : (index) -> index {
    %e = tensor.extract %t[%k, %c0] : tensor<16x16xbf16>
    %z = arith.constant 0.0 : bf16
    %more = arith.cmpf ogt, %e, %z : bf16
    scf.condition(%more) %k : index
  } do {
  ^bb0(%j: index):
    %j1 = arith.addi %j, %c16 : index
    scf.yield %j1 : index
  }
  %u = tile.load %b[%end, %c0] : !tile.desc<?x?xbf16, box = [16, 16]> -> tensor<16x16xbf16>
  tile.store %u, %a[%c0, %c0] : tensor<16x16xbf16> -> !tile.desc<?x?xbf16, box = [16, 16]>
  func.return
}
// CHECK: error: tile.load address depends on tile data (%t : tensor<16x16xbf16>); the producer can only compute addresses from scalars

// -----

// A scalar taken out of a loaded tile is tile data too: no address may use it.
func.func @address_from_extract(%s: !tile.desc<?xf32, box = [4]>, %a: !tile.desc<?x?xbf16, box = [64, 64]>,
                                %c: !tile.desc<?x?xbf16, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ts = tile.load %s[%c0] : !tile.desc<?xf32, box = [4]> -> tensor<4xf32>
  %x = tile.extract %ts[0] : tensor<4xf32>
  %i = arith.fptosi %x : f32 to i32
  %j = arith.index_cast %i : i32 to index
  %ta = tile.load %a[%j, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  tile.store %ta, %c[%c0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}
// CHECK: error: tile.load address depends on tile data (%ts : tensor<4xf32>); the producer can only compute addresses from scalars

// -----

// A load of what the kernel stored before it: the producer loads ahead of the
// consumer's stores (the lowered kernel read the tensor as it was before, while
// the interpreter read the stored tile).
func.func @load_after_store(%a: !tile.desc<?x?xf32, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>,
                            %d: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  tile.store %t, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  %back = tile.load %c[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  tile.store %back, %d[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: aref-partition-invalid.mlir:[[# @LINE - 4]]:3: error: tile.load of %c, which the kernel stores into before it (tile.store at {{.*}}aref-partition-invalid.mlir:[[# @LINE - 5]]:3): the producer warpgroup issues its loads ahead of the consumers' stores, so it would read what was there before; use the stored tile itself

// -----

// A load before the store (C = alpha A B + beta C), in a loop whose later
// iterations store (other rows), is partitioned.
func.func @load_before_store(%a: !tile.desc<?x?xf32, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>,
                             %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  scf.for %i = %c0 to %n step %c64 {
    %t = tile.load %c[%i, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %u = tile.load %a[%i, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    %s = arith.addf %t, %u : tensor<64x64xf32>
    tile.store %s, %c[%i, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  }
  func.return
}
// CHECK-LABEL: func.func @load_before_store
// CHECK: aref.warp_specialize
