// xDSL's cleanups after aref-partition keep the slot protocol whole.
// A get whose tiles nobody reads still takes its slot: dce deleted it and left
// a consumed of an index never gotten (the lowering then said the ring is
// never gotten).
// RUN: tawa-opt %s -p 'aref-partition,dce' | filecheck %s
// RUN: tawa-opt %s -p 'aref-partition,dce,pipeline,convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=LOWERED
// cse after aref-partition merges two identical loads the user wrote (A A^T):
// the put then carries one tile twice, which the lowering refuses, saying why.
// RUN: not tawa-opt %s -p 'aref-partition,cse,convert-aref-to-nvgpu-async' 2>&1 | filecheck %s --check-prefix=CSE
// RUN: tawa-opt %s -p 'cse,aref-partition,convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=LOWERED

// CHECK-LABEL: func.func @aat
// CHECK:         aref.warp_specialize
// CHECK:         aref.get %ring0
// CHECK:         aref.consumed %ring0
// CHECK:         %{{.*}} = aref.get %[[ROW:.*]][
// CHECK-NEXT:    aref.consumed %[[ROW]][

// LOWERED: nvgpu_async.launch

// CSE: aref-cleanups.mlir:[[# @LINE + 10]]:5: error: aref.put: convert-aref-to-nvgpu-async: aref.put carries one tile.load's tile in two slots: cse merged identical loads after aref-partition; run cse before aref-partition (as tawa-hopper-pipeline does)
func.func @aat(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %pid = tile.program_id x
  %m0 = arith.muli %pid, %c64 : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %zero = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %x = scf.for %k = %c0 to %K step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32>) {
    %t = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %u = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %ut = tile.trans %u : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %d = tile.dot %t, %ut, %acc : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %row = tile.load %a[%m0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  tile.store %x, %c[%m0, %m0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
