// tile-shape resizes the dimensions a kernel names (tile.box on descriptors,
// tile.size on index constants) through every op that relates tile shapes.
// RUN: tawa-opt %examples/gemm.mlir -p 'tile-shape{block-n=256}' | filecheck %s
// RUN: tawa-opt %examples/attention.mlir -p 'tile-shape{block-m=64 block-n=32}' | filecheck %s --check-prefix=ATTN
// RUN: tawa-opt %examples/gemm.mlir -p 'tile-shape' | filecheck %s --check-prefix=KEEP

// BN: B's box rows, C's box columns, the accumulator, the dot, the tile offset.
// CHECK-LABEL: func.func @gemm_nt(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]}, %b: !tile.desc<?x?xbf16, box = [256, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]}, %c: !tile.desc<?x?xbf16, box = [128, 256]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]})
// CHECK:         %bn = arith.constant {tile.size = "BN"} 256 : index
// CHECK:         %n0 = arith.muli %pid_n, %bn : index
// CHECK:         %zero = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
// CHECK:         tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [256, 64]> -> tensor<256x64xbf16>
// CHECK-NEXT:    tile.trans %{{.*}} : tensor<256x64xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT:    tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x64xbf16>, tensor<64x256xbf16> -> tensor<128x256xf32>
// CHECK:         tile.store %{{.*}}, %c[%m0, %n0] : tensor<128x256xbf16> -> !tile.desc<?x?xbf16, box = [128, 256]>
// The K x N layout of B names its axes the other way round.
// CHECK-LABEL: func.func @gemm_nn
// CHECK-SAME:    %b: !tile.desc<?x?xbf16, box = [64, 256]> {tile.box = ["BK", "BN"], tile.dims = ["K", "N"]}

// Attention: query rows (BM) and key columns (BN) reach the scores, the row
// statistics, the iotas and splats of the masks, and the loop steps; the head
// dimension stays.
// ATTN-LABEL: func.func @attention_d64(%q: !tile.desc<?x?x64xbf16, box = [1, 64, 64]>
// ATTN-SAME:    %k: !tile.desc<?x?x64xbf16, box = [1, 32, 64]>
// ATTN:         %bm = arith.constant {tile.size = "BM"} 64 : index
// ATTN-NEXT:    %bn = arith.constant {tile.size = "BN"} 32 : index
// ATTN:         %scale_t = tile.splat %qk_scale : f32 -> tensor<64x32xf32>
// ATTN:         %m_init = tile.splat %ninf : f32 -> tensor<64xf32>
// ATTN:         %acc_init = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
// ATTN:         %col_iota_1d = tile.iota : tensor<32xi32>
// ATTN:         tile.dot %q_t, %k_tt, %zero_s : tensor<64x64xbf16>, tensor<64x32xbf16> -> tensor<64x32xf32>
// ATTN:         tile.dot %p_lo, %v_t, %acc_scaled : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>

// Without options nothing changes.
// KEEP-LABEL: func.func @gemm_nt
// KEEP:         %bn = arith.constant {tile.size = "BN"} 128 : index
