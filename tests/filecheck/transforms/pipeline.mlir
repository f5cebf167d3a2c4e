// pipeline on the examples: ring depth, MMAs in flight, two-stage overlap.
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline{num-stages=4 mma-depth=2}' | filecheck %s --check-prefix=GEMM
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline' | filecheck %s --check-prefix=DEFAULT
// RUN: tawa-opt %examples/gemm_epilogue.mlir -p 'aref-partition,pipeline{num-stages=2}' | filecheck %s --check-prefix=EPI
// RUN: tawa-opt %examples/attention.mlir -p 'aref-partition,pipeline{num-stages=2 two-stage=true}' | filecheck %s --check-prefix=ATTN
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,pipeline{two-stage=true}' | filecheck %s --check-prefix=NOROT

// mma-depth 2: index i is released in iteration i + 1, the last one after the loop.
// GEMM-LABEL: func.func @gemm_nt
// GEMM:         %[[R:.*]] = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 4>
// GEMM:       } consumer {
// GEMM:         %[[LAG:.*]] = arith.constant 1 : index
// GEMM-NEXT:    %[[FROM:.*]] = arith.addi %[[START:.*]], %[[LAG]] : index
// GEMM-NEXT:    %{{.*}}, %[[END:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %zero, %[[I:.*]] = %[[START]])
// GEMM-NEXT:      aref.get %[[R]][%[[I]]]
// GEMM:           tile.dot
// GEMM-NEXT:      %[[READY:.*]] = arith.cmpi sge, %[[I]], %[[FROM]] : index
// GEMM-NEXT:      scf.if %[[READY]] {
// GEMM-NEXT:        %[[DONE:.*]] = arith.subi %[[I]], %[[LAG]] : index
// GEMM-NEXT:        aref.consumed %[[R]][%[[DONE]]]
// GEMM-NEXT:      }
// GEMM:         }
// GEMM-NEXT:    %[[T0:.*]] = arith.subi %[[END]], %[[LAG]] : index
// GEMM-NEXT:    %[[LO:.*]] = arith.maxsi %[[T0]], %[[START]] : index
// GEMM-NEXT:    %[[ONE:.*]] = arith.constant 1 : index
// GEMM-NEXT:    scf.for %[[TAIL:.*]] = %[[LO]] to %[[END]] step %[[ONE]] {
// GEMM-NEXT:      aref.consumed %[[R]][%[[TAIL]]]
// GEMM-NEXT:    }
// GEMM-NEXT:    arith.truncf

// Defaults: three stages, one MMA in flight (released in its own iteration).
// DEFAULT:     aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
// DEFAULT-NOT: scf.if

// Only rings deepen; the bias's depth-1 aref stays.
// EPI-LABEL: func.func @gemm_scale_bias_relu
// EPI-NEXT:    aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 2>
// EPI-NEXT:    aref.create : !aref.aref<[tensor<128xbf16>], depth = 1>

// Two-stage: S = Q K^T of the first block is issued before the loop; each
// iteration of the steady loop issues the next block's QK^T before the softmax of
// the current one; the last block's softmax and P V are peeled after the loop.
// ATTN-LABEL: func.func @attention_d64
// ATTN:         %[[KV:.*]] = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 2>
// ATTN:       } consumer {
// ATTN:         %[[QT:.*]] = aref.get
// ATTN:         %[[HAS:.*]] = arith.cmpi slt
// ATTN-NEXT:    %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = scf.if %[[HAS]] -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>, index) {
// ATTN-NEXT:      %{{.*}}, %[[V0:.*]] = aref.get %[[KV]]
// ATTN-NEXT:      %[[KT:.*]] = tile.trans
// ATTN-NEXT:      %[[S0:.*]] = tile.dot %[[QT]], %[[KT]], %zero_s
// ATTN:           %[[LAST:.*]] = arith.addi
// ATTN-NEXT:      {{.*}} = scf.for %{{.*}} = %{{.*}} to %[[LAST]] step {{.*}} iter_args({{.*}}, %[[I:.*]] = %{{.*}}, %[[VC:.*]] = %[[V0]], %[[SC:.*]] = %[[S0]])
// ATTN:             %[[INEXT:.*]] = arith.addi %[[I]]
// ATTN-NEXT:        %{{.*}}, %[[VN:.*]] = aref.get %[[KV]][%[[INEXT]]]
// ATTN:             %[[SN:.*]] = tile.dot %[[QT]]
// ATTN-NEXT:        arith.mulf %[[SC]], %scale_t
// ATTN:             tile.reduce max
// ATTN:             tile.dot %{{.*}}, %[[VC]]
// ATTN-NEXT:        aref.consumed %[[KV]][%[[I]]]
// ATTN:             scf.yield {{.*}}, %[[VN]], %[[SN]]
// ATTN:           }
// ATTN:           tile.reduce max
// ATTN:           tile.dot
// ATTN-NEXT:      aref.consumed %[[KV]]
// ATTN:         } else {

// GEMM's only dot accumulates into the loop carry: nothing to overlap, unchanged.
// NOROT-LABEL: func.func @gemm_nt
// NOROT:       consumer {
// NOROT-NOT:   scf.if
// NOROT:       aref.get
// NOROT:       tile.dot
// NOROT-NEXT:  aref.consumed
