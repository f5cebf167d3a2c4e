// FP8 kernels at the thread level (-t ptx): k32 wgmmas of 8-bit inputs with no
// transpose immediates, mixed e4m3/e5m2, saturating packs, a block scale read
// out of its TMA box, P moved into the 8-bit A layout by quad shuffles, and
// tiles of 64-byte rows swizzled at 64 bytes (descriptor mode 2, SBO 512).
// RUN: tawa-opt %examples/gemm_fp8.mlir -p tawa-hopper-pipeline -t ptx | filecheck %s --check-prefix=GEMM
// RUN: tawa-opt %examples/attention_fp8.mlir -p tawa-hopper-pipeline -t ptx | filecheck %s --check-prefix=ATTN
// RUN: tawa-opt %s -p tawa-hopper-pipeline -t ptx | filecheck %s --check-prefix=NARROW

// GEMM-LABEL: .visible .entry gemm_fp8_tensorwise(
// GEMM:         wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e4m3 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1;
// GEMM-LABEL: .visible .entry gemm_fp8_e4m3_e5m2(
// GEMM:         wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e5m2 {{{.*}}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1;
// GEMM-LABEL: .visible .entry gemm_fp8_e4m3_out(
// GEMM:         cvt.rn.satfinite.e4m3x2.f32 %h{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// GEMM:         st.shared.b16 [%r{{[0-9]+}}{{.*}}], %h{{[0-9]+}};
// GEMM-LABEL: .visible .entry gemm_fp8_rowwise(
// GEMM-LABEL: .visible .entry gemm_fp8_blockwise(
// GEMM:         wgmma.mma_async.sync.aligned.m64n{{[0-9]+}}k32.f32.e4m3.e4m3
// GEMM:         ld.shared.f32 %f{{[0-9]+}}, [%r{{[0-9]+}}];

// Q and K of head dim 64 have 64-byte rows: (2 << 62) | (512 >> 4) << 32 | 1 << 16.
// ATTN-LABEL: .visible .entry attention_d64_fp8(
// ATTN:         or.b64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, -9223371899415756800;
// ATTN:         cvt.rn.satfinite.e4m3x2.f32
// ATTN:         mov.b32 %r{{[0-9]+}}, {%h{{[0-9]+}}, %h{{[0-9]+}}};
// ATTN:         selp.b32
// ATTN:         shfl.sync.idx.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, 31, -1;
// ATTN:         prmt.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
// ATTN:         wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {{{.*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, %p{{[0-9]+}}, 1, 1;

// 16-bit tiles with 64-byte rows (32 columns) are swizzled at 64 bytes too: the
// second k16 step is 32 bytes (2 in 16-byte units) further.
// NARROW-LABEL: .visible .entry narrow_bf16(
// NARROW:         or.b64 %rd[[A:[0-9]+]], %rd{{[0-9]+}}, -9223371899415756800;
// NARROW:         wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// NARROW:         add.s64 %rd{{[0-9]+}}, %rd{{[0-9]+}}, 2;
// NARROW:         wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
func.func @narrow_bf16(%a: !tile.desc<?x?xbf16, box = [64, 32]> {tile.dims = ["M", "K"]},
                       %b: !tile.desc<?x?xbf16, box = [64, 32]> {tile.dims = ["N", "K"]},
                       %c: !tile.desc<?x?xf32, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 32]>
  %m0 = arith.muli %pid, %c64 : index
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %K step %c32 iter_args(%acc_k = %z) -> (tensor<64x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 32]> -> tensor<64x32xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 32]> -> tensor<64x32xbf16>
    %tbt = tile.trans %tb : tensor<64x32xbf16> -> tensor<32x64xbf16>
    %d = tile.dot %ta, %tbt, %acc_k : tensor<64x32xbf16>, tensor<32x64xbf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  tile.store %acc, %c[%m0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
