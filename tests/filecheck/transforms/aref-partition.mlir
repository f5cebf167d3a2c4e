// aref-partition on every bundled example.
// RUN: tawa-opt %examples/gemm.mlir -p aref-partition | filecheck %s --check-prefix=GEMM
// RUN: tawa-opt %examples/gemm_epilogue.mlir -p aref-partition | filecheck %s --check-prefix=EPI
// RUN: tawa-opt %examples/attention.mlir -p aref-partition | filecheck %s --check-prefix=ATTN

// One ring carries A and B of an iteration; the producer keeps only the index math
// and the loads, the consumer only the MMAs and the store; both count the index.
// GEMM-LABEL: func.func @gemm_nt
// GEMM-NEXT:    %[[R:.*]] = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 1>
// GEMM-NEXT:    aref.warp_specialize consumers = 1 producer {
// GEMM-NEXT:      %[[I0:.*]] = arith.constant 0 : index
// GEMM-NOT:       tile.dot
// GEMM:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[I:.*]] = %[[I0]]) -> (index) {
// GEMM-NEXT:        %[[A:.*]] = tile.load %a
// GEMM-NEXT:        %[[B:.*]] = tile.load %b
// GEMM-NEXT:        aref.put %[[R]][%[[I]]], %[[A]], %[[B]]
// GEMM:             %[[N:.*]] = arith.addi %[[I]], %{{.*}} : index
// GEMM-NEXT:        scf.yield %[[N]] : index
// GEMM:         } consumer {
// GEMM-NOT:       tile.load
// GEMM:           %{{.*}}, %{{.*}} = scf.for {{.*}} iter_args(%{{.*}} = %zero, %[[J:.*]] = %{{.*}}) -> (tensor<128x128xf32>, index) {
// GEMM-NEXT:        %[[TA:.*]], %[[TB:.*]] = aref.get %[[R]][%[[J]]]
// GEMM-NEXT:        %[[TBT:.*]] = tile.trans %[[TB]]
// GEMM-NEXT:        tile.dot %[[TA]], %[[TBT]]
// GEMM-NEXT:        aref.consumed %[[R]][%[[J]]]
// GEMM:           tile.store
// GEMM-NEXT:    }
// GEMM-NEXT:    func.return
// GEMM-LABEL: func.func @gemm_nn
// GEMM:         aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<64x128xbf16>], depth = 1>

// The bias, loaded outside the loop, gets its own depth-1 aref, put after the ring's
// last iteration and released after its last use in the epilogue.
// EPI-LABEL: func.func @gemm_scale_bias_relu
// EPI-NEXT:    %[[R:.*]] = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 1>
// EPI-NEXT:    %[[BR:.*]] = aref.create : !aref.aref<[tensor<128xbf16>], depth = 1>
// EPI:         producer {
// EPI:           scf.for
// EPI:             aref.put %[[R]]
// EPI:           %[[BIAS:.*]] = tile.load %bias
// EPI-NEXT:      aref.put %[[BR]][%{{.*}}], %[[BIAS]]
// EPI:         } consumer {
// EPI:           %[[BV:.*]] = aref.get %[[BR]]
// EPI:           arith.extf %[[BV]]
// EPI-NEXT:      aref.consumed %[[BR]]
// EPI:           tile.store

// Q arrives once through a depth-1 aref; K and V share a ring whose index keeps
// counting from the off-diagonal loop into the diagonal one.
// ATTN-LABEL: func.func @attention_causal_d64
// ATTN-NEXT:    %[[Q:.*]] = aref.create : !aref.aref<[tensor<128x64xbf16>], depth = 1>
// ATTN-NEXT:    %[[KV:.*]] = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 1>
// ATTN:         producer {
// ATTN:           aref.put %[[Q]]
// ATTN:           %[[END1:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (index) {
// ATTN:             aref.put %[[KV]]
// ATTN:           scf.for {{.*}} iter_args(%{{.*}} = %[[END1]]) -> (index) {
// ATTN:             aref.put %[[KV]]
// ATTN:         } consumer {
// ATTN:           %[[QT:.*]] = aref.get %[[Q]]
// ATTN:           %{{.*}}, %{{.*}}, %{{.*}}, %[[CEND1:.*]] = scf.for
// ATTN:             aref.get %[[KV]]
// ATTN:             tile.dot %[[QT]]
// ATTN:             tile.dot
// ATTN:             aref.consumed %[[KV]]
// ATTN:           scf.for {{.*}} iter_args({{.*}}, %{{.*}} = %[[CEND1]])
// ATTN:             aref.get %[[KV]]
// ATTN:             tile.select
// ATTN:             aref.consumed %[[KV]]
// ATTN:           aref.consumed %[[Q]]
// ATTN:           tile.store
