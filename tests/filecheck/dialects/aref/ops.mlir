// RUN: tawa-opt %s --split-input-file | filecheck %s
// RUN: TAWA_ROUNDTRIP

// CHECK-LABEL: func.func @ring
// CHECK:       %[[R:.*]] = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<64x128xbf16>], depth = 3>
// CHECK-NEXT:  %[[Q:.*]] = aref.create : !aref.aref<[tensor<128x64xbf16>], depth = 1>
// CHECK-NEXT:  aref.warp_specialize consumers = 2 registers = [40, 232] producer {
// CHECK:         scf.for
// CHECK:           aref.put %[[R]][%{{.*}}], %{{.*}}, %{{.*}} : !aref.aref<[tensor<128x64xbf16>, tensor<64x128xbf16>], depth = 3>
// CHECK:       } consumer {
// CHECK:         %[[Qv:.*]] = aref.get %[[Q]][%{{.*}}] : !aref.aref<[tensor<128x64xbf16>], depth = 1>
// CHECK:         %[[A:.*]], %[[B:.*]] = aref.get %[[R]][%{{.*}}] : !aref.aref<[tensor<128x64xbf16>, tensor<64x128xbf16>], depth = 3>
// CHECK-NEXT:    aref.consumed %[[R]][%{{.*}}] : !aref.aref<[tensor<128x64xbf16>, tensor<64x128xbf16>], depth = 3>
// CHECK:         aref.consumed %[[Q]][%{{.*}}] : !aref.aref<[tensor<128x64xbf16>], depth = 1>
// CHECK-NEXT:  }
func.func @ring(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>, %n: index) {
  %r = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<64x128xbf16>], depth = 3>
  %q = aref.create : !aref.aref<[tensor<128x64xbf16>], depth = 1>
  aref.warp_specialize consumers = 2 registers = [40, 232] producer {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    aref.put %q[%c0], %a : !aref.aref<[tensor<128x64xbf16>], depth = 1>
    scf.for %i = %c0 to %n step %c1 {
      aref.put %r[%i], %a, %b : !aref.aref<[tensor<128x64xbf16>, tensor<64x128xbf16>], depth = 3>
    }
  } consumer {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %qv = aref.get %q[%c0] : !aref.aref<[tensor<128x64xbf16>], depth = 1>
    scf.for %i = %c0 to %n step %c1 {
      %x, %y = aref.get %r[%i] : !aref.aref<[tensor<128x64xbf16>, tensor<64x128xbf16>], depth = 3>
      aref.consumed %r[%i] : !aref.aref<[tensor<128x64xbf16>, tensor<64x128xbf16>], depth = 3>
    }
    aref.consumed %q[%c0] : !aref.aref<[tensor<128x64xbf16>], depth = 1>
  }
  func.return
}

// -----

// Register budgets are optional.
// CHECK-LABEL: func.func @plain
// CHECK: aref.warp_specialize consumers = 1 producer {
// CHECK-NEXT: } consumer {
// CHECK-NEXT: }
func.func @plain() {
  aref.warp_specialize consumers = 1 producer {
  } consumer {
  }
  func.return
}
