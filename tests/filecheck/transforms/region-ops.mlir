// scf.while and scf.if in a kernel (not only scf.for): aref-partition clones them
// whole into each role that needs them, together with the values their regions
// read from outside (constants, loop bounds); the producer computes a scalar
// scf.while its loop bound depends on.
// RUN: tawa-opt %S/../../kernels/gemm_while.mlir -p aref-partition | filecheck %s

// CHECK-LABEL: func.func @gemm_while
// CHECK:       producer {
// CHECK:         %[[BK:.*]] = arith.constant 64 : index
// CHECK:         %[[END:.*]] = scf.while
// CHECK:           arith.addi %{{.*}}, %[[BK]] : index
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[END]] step %[[BK]]
// CHECK-NEXT:      tile.load %a
// CHECK:       } consumer {
// CHECK-NOT:     tile.load
// CHECK:         %[[ONE:.*]] = arith.constant 1 : index
// CHECK:         %[[HALF:.*]] = arith.constant dense<5.000000e-01> : tensor<128x128xf32>
// CHECK-NEXT:    %[[MINUS:.*]] = arith.constant dense<-1.000000e+00> : tensor<128x128xf32>
// CHECK:         %[[ACC:.*]], %{{.*}} = scf.for
// CHECK:         %{{.*}}, %[[SCALED:.*]] = scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %[[ACC]])
// CHECK:           arith.addi %{{.*}}, %[[ONE]] : index
// CHECK-NEXT:      arith.mulf %{{.*}}, %[[HALF]] : tensor<128x128xf32>
// CHECK:         scf.if
// CHECK-NEXT:      arith.mulf %[[SCALED]], %[[MINUS]] : tensor<128x128xf32>
// CHECK:         tile.store
