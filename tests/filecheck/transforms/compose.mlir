// The passes compose with xDSL's cleanups before, between and after them.
// RUN: tawa-opt %examples/attention.mlir -p 'canonicalize,cse,aref-partition,canonicalize,cse,dce,pipeline{num-stages=3 mma-depth=2 two-stage=true},canonicalize,cse,dce' | filecheck %s
// RUN: tawa-opt %examples/gemm_epilogue.mlir -p 'cse,aref-partition,dce,pipeline{num-stages=2 mma-depth=2},canonicalize' | filecheck %s --check-prefix=EPI

// CHECK-LABEL: func.func @attention_d128
// CHECK:         aref.create : !aref.aref<[tensor<128x128xbf16>], depth = 1>
// CHECK:         aref.create : !aref.aref<[tensor<128x128xbf16>, tensor<128x128xbf16>], depth = 3>
// CHECK:         aref.warp_specialize
// CHECK:           aref.put
// CHECK:         } consumer {
// CHECK:           aref.get
// CHECK:           scf.for
// CHECK:             aref.get
// CHECK:             aref.consumed
// CHECK:           scf.for
// CHECK-NEXT:        aref.consumed
// CHECK:           tile.store

// EPI-LABEL: func.func @gemm_bias_gelu
// EPI:         math.tanh
// EPI:         tile.store
