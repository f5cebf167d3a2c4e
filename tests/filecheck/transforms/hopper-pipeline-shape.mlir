// tawa-hopper-pipeline{shape="NAME=EXTENT,..."} lowers each kernel as compile()
// specializes it for a call of that shape (tawa_xdsl/heuristics.py).
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline' | filecheck %s --check-prefix=TUNED
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{shape="M=64,N=4096,K=4096"}' | filecheck %s --check-prefix=SMALL
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{shape="M=512,N=4096,K=4096"}' | filecheck %s --check-prefix=WAVE
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{shape="M=64,N=4096,K=4096" tuned=false}' | filecheck %s --check-prefix=UNTUNED
// RUN: tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{shape="M=64,N=4096,K=4096"}' -t ptx | filecheck %s --check-prefix=PTX
// RUN: not tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{shape="M=64,Q=2"}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not tawa-opt %examples/gemm.mlir -p 'tawa-hopper-pipeline{shape="M=big"}' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not tawa-opt %s -p 'tawa-hopper-pipeline{shape="D=16"}' 2>&1 | filecheck %s --check-prefix=FIXED
// RUN: tawa-opt %s -p 'tawa-hopper-pipeline{shape="M=100,D=64"}' | filecheck %s --check-prefix=HEADS

// Without a shape (or untuned): 128x256 tiles, two consumer warpgroups,
// persistent (the tile count is read at launch).
// TUNED-LABEL: func.func @gemm_nt(
// TUNED-SAME:    tile.persistent
// TUNED-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 384,

// tuned=false: the options given and the static defaults, whatever the shape.
// UNTUNED-LABEL: func.func @gemm_nt(
// UNTUNED-NOT:     tile.persistent
// UNTUNED-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 384,

// M = 64: 64x64 tiles (the wave model weighs 64-wide tiles from 32 output
// rows, NOTES 3.82; every tile shape streams B from HBM, and 64 rows waste
// no MMAs), one consumer warpgroup, 8 stages (small slots: the ring keeps
// more loads in flight from HBM), and 64 tiles fit one wave: not
// persistent. (compile() may split K too; the pipeline lowers the kernel
// it is given.)
// SMALL-LABEL: func.func @gemm_nt(
// SMALL-SAME:    %b: !nvgpu_async.tensor_map<?x?xbf16, box = [64, 64], swizzle = 128>
// SMALL-NOT:     tile.persistent
// SMALL-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 140416,

// M = 512: 128x128 tiles make 128 programs (one wave of 132 SMs) where
// 128x256 made 64: two consumer warpgroups, 5 stages.
// WAVE-LABEL: func.func @gemm_nt(
// WAVE-NOT:     tile.persistent
// WAVE-SAME:    nvgpu_async.launch = #nvgpu_async.launch<threads = 384, smem = 197712,

// PTX: .visible .entry gemm_nt(
// PTX: .maxntid 256, 1, 1

// UNKNOWN: tawa-opt: tawa-hopper-pipeline: shape names Q, which no kernel here names (tile.dims: K, M, N)
// SYNTAX: tawa-opt: tawa-hopper-pipeline: shape: expected NAME=EXTENT pairs (a positive integer each, up to 2147483647), e.g. "M=512,N=4096,K=4096"; got 'M=big'

// An extent no kernel's types allow (each fixes D) is refused (the kernels
// were lowered for calls none could take); one that some allow specializes
// those, the others lowered for the rest of the shape.
// FIXED: tawa-opt: tawa-hopper-pipeline: shape: D=16, but argument 'x' dimension 1 (D) has extent 64 in its type !tile.desc<?x64xf32, box = [64, 64]>: no call has that shape
// HEADS: func.func @rows_d64(
// HEADS: func.func @rows_d32(
func.func @rows_d64(%x: !tile.desc<?x64xf32, box = [64, 64]> {tile.dims = ["M", "D"]},
    %y: !tile.desc<?x64xf32, box = [64, 64]> {tile.dims = ["M", "D"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x64xf32, box = [64, 64]> -> tensor<64x64xf32>
  tile.store %t, %y[%m0, %c0] : tensor<64x64xf32> -> !tile.desc<?x64xf32, box = [64, 64]>
  func.return
}
func.func @rows_d32(%x: !tile.desc<?x32xf32, box = [64, 32]> {tile.dims = ["M", "D"]},
    %y: !tile.desc<?x32xf32, box = [64, 32]> {tile.dims = ["M", "D"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x32xf32, box = [64, 32]> -> tensor<64x32xf32>
  tile.store %t, %y[%m0, %c0] : tensor<64x32xf32> -> !tile.desc<?x32xf32, box = [64, 32]>
  func.return
}
