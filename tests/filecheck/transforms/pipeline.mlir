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

// Two-stage: the first block's stage one (get, S = Q K^T, softmax giving P and
// alpha) runs before the loop. Each steady iteration issues the next block's
// QK^T, then this block's rescale and P V (stage two, reading the P, alpha, V
// and index handed over through the iteration arguments), then the next
// block's softmax, and releases this block's slot last. The last stage two is
// peeled after the loop.
// ATTN-LABEL: func.func @attention_d64
// ATTN:         %[[KV:[a-z0-9_]+]] = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 2>
// ATTN:       } consumer {
// ATTN:         %[[QT:[a-z0-9_]+]] = aref.get
// ATTN:         %[[HAS:[a-z0-9_]+]] = arith.cmpi slt
// ATTN-NEXT:    %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = scf.if %[[HAS]] -> (tensor<128xf32>, tensor<128xf32>, tensor<128x64xf32>, index) {
// ATTN-NEXT:      %{{.*}}, %[[V0:[a-z0-9_]+]] = aref.get %[[KV]][%[[I0:[a-z0-9_]+]]]
// ATTN-NEXT:      %[[KT:[a-z0-9_]+]] = tile.trans
// ATTN-NEXT:      %[[S0:[a-z0-9_]+]] = tile.dot %[[QT]], %[[KT]], %zero_s
// ATTN:           %[[ALPHA0:[a-z0-9_]+]] = math.exp2 %m_diff
// ATTN:           %[[P0:[a-z0-9_]+]] = arith.truncf
// ATTN:           %[[LAST:last_iv[a-z0-9_]*]] = arith.addi
// ATTN-NEXT:      {{.*}} = scf.for %{{.*}} = %{{.*}} to %[[LAST]] step {{.*}} iter_args({{.*}}, %[[ACC:[a-z0-9_]+]] = %acc_init, %[[I:[a-z0-9_]+]] = %{{.*}}, %[[ALPHA:[a-z0-9_]+]] = %[[ALPHA0]], %[[P:[a-z0-9_]+]] = %[[P0]], %[[VC:[a-z0-9_]+]] = %[[V0]], %[[IC:[a-z0-9_]+]] = %[[I0]])
// ATTN-NEXT:        arith.addi
// ATTN-NEXT:        %{{.*}}, %[[VN:[a-z0-9_]+]] = aref.get %[[KV]][%[[I]]]
// ATTN-NEXT:        tile.trans
// ATTN-NEXT:        %[[SN:[a-z0-9_]+]] = tile.dot %[[QT]]
// ATTN-NEXT:        tile.expand_dims %[[ALPHA]]
// ATTN-NEXT:        tile.broadcast
// ATTN-NEXT:        %[[SCALED:[a-z0-9_]+]] = arith.mulf %[[ACC]]
// ATTN-NEXT:        %[[ACCN:[a-z0-9_]+]] = tile.dot %[[P]], %[[VC]], %[[SCALED]]
// ATTN-NEXT:        tile.reduce max %[[SN]]
// ATTN:             %[[ALPHAN:[a-z0-9_]+]] = math.exp2 %m_diff
// ATTN:             %[[PN:[a-z0-9_]+]] = arith.truncf
// ATTN:             %[[INEXT:[a-z0-9_]+]] = arith.addi %[[I]]
// ATTN-NEXT:        aref.consumed %[[KV]][%[[IC]]]
// ATTN-NEXT:        scf.yield %{{.*}}, %{{.*}}, %[[ACCN]], %[[INEXT]], %[[ALPHAN]], %[[PN]], %[[VN]], %[[I]]
// ATTN:           }
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
