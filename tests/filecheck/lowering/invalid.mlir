// The Hopper lowering refuses what the hardware path cannot do, at the op.
// RUN: not tawa-opt %examples/gemm.mlir -p convert-aref-to-nvgpu-async 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative{num-consumers=3}' 2>&1 | filecheck %s --check-prefix=COOP
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative{num-consumers=4}' 2>&1 | filecheck %s --check-prefix=COOPN
// RUN: not tawa-opt %examples/attention.mlir -p 'tawa-hopper-pipeline{tuned=false num-stages=4 num-consumers=2}' 2>&1 | filecheck %s --check-prefix=SMEM
// RUN: not tawa-opt %examples/gemm.mlir -t ptx 2>&1 | filecheck %s --check-prefix=PTX
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p 'aref-partition,convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=SHAPE

// ORDER: error: func.func: convert-aref-to-nvgpu-async takes aref IR (made by aref-partition), but kernel @gemm_nt is tile IR: run aref-partition first
// COOP: error: tile.dot: cooperative: M = 128 rows cannot be split into 64-row wgmma blocks over 3 warpgroups
// COOPN: tawa-opt: cooperative: num-consumers must be 1, 2 or 3, got 4
// SMEM: error: func.func: convert-aref-to-nvgpu-async: the aref rings need {{[0-9]+}} bytes of shared memory; a block can have 231424. Use fewer stages or smaller tiles
// PTX: tawa-opt: {{.*}}gemm.mlir:9:1: error: func.func: -t ptx needs lowered kernels; @gemm_nt is not: run tawa-hopper-pipeline

// SHAPE: error: tile.dot: convert-aref-to-nvgpu-async: K = 24: wgmma needs a multiple of 16 for bf16 inputs
func.func @k24(%a: !tile.desc<?x?xbf16, box = [64, 24]>, %b: !tile.desc<?x?xbf16, box = [24, 64]>,
               %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 24]> -> tensor<64x24xbf16>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [24, 64]> -> tensor<24x64xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %ta, %tb, %z : tensor<64x24xbf16>, tensor<24x64xbf16> -> tensor<64x64xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// -----

// SHAPE: error: tile.dot: convert-aref-to-nvgpu-async: M = 32 rows cannot be split into 64-row wgmma blocks over 1 consumer warpgroup
func.func @m32(%a: !tile.desc<?x?xbf16, box = [32, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
               %c: !tile.desc<?x?xf32, box = [32, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [32, 64]> -> tensor<32x64xbf16>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %z = arith.constant dense<0.0> : tensor<32x64xf32>
  %d = tile.dot %ta, %tb, %z : tensor<32x64xbf16>, tensor<64x64xbf16> -> tensor<32x64xf32>
  tile.store %d, %c[%c0, %c0] : tensor<32x64xf32> -> !tile.desc<?x?xf32, box = [32, 64]>
  func.return
}

// -----

// SHAPE: error: tile.load: convert-aref-to-nvgpu-async: tile rows of 48 bytes: the swizzled TMA path needs rows of a multiple of 32 bytes (16 elements)
func.func @narrow(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 24]>,
                  %c: !tile.desc<?x?xf32, box = [64, 24]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 24]> -> tensor<64x24xbf16>
  %z = arith.constant dense<0.0> : tensor<64x24xf32>
  %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x24xbf16> -> tensor<64x24xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x24xf32> -> !tile.desc<?x?xf32, box = [64, 24]>
  func.return
}

// -----

// B of 80 rows of 96 bytes: three 32-byte swizzle chunks of 2560 bytes each, so the
// second starts off the 1024-byte boundary swizzled tiles start on (it compiled, and
// its TMA load wrote the chunk there: a Hazard in the thread simulator)
// SHAPE: error: tile.load: convert-aref-to-nvgpu-async: a tile of 80 rows cut into 32-byte swizzle chunks of 2560 bytes: swizzled chunks start on 1024-byte boundaries, so a tile of several chunks needs a multiple of 32 rows
func.func @chunk_2560(%a: !tile.desc<?x?xbf16, box = [128, 48]>, %b: !tile.desc<?x?xbf16, box = [80, 48]>,
                      %c: !tile.desc<?x?xf32, box = [128, 80]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [128, 48]> -> tensor<128x48xbf16>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [80, 48]> -> tensor<80x48xbf16>
  %tbt = tile.trans %tb : tensor<80x48xbf16> -> tensor<48x80xbf16>
  %z = arith.constant dense<0.0> : tensor<128x80xf32>
  %d = tile.dot %ta, %tbt, %z : tensor<128x48xbf16>, tensor<48x80xbf16> -> tensor<128x80xf32>
  tile.store %d, %c[%c0, %c0] : tensor<128x80xf32> -> !tile.desc<?x?xf32, box = [128, 80]>
  func.return
}

// -----

// 8-bit inputs: one wgmma covers k32
// SHAPE: error: tile.dot: convert-aref-to-nvgpu-async: K = 48: wgmma needs a multiple of 32 for f8E4M3FN inputs
func.func @fp8_k48(%a: !tile.desc<?x?xf8E4M3FN, box = [64, 48]>, %b: !tile.desc<?x?xf8E4M3FN, box = [64, 48]>,
                   %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xf8E4M3FN, box = [64, 48]> -> tensor<64x48xf8E4M3FN>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xf8E4M3FN, box = [64, 48]> -> tensor<64x48xf8E4M3FN>
  %tbt = tile.trans %tb : tensor<64x48xf8E4M3FN> -> tensor<48x64xf8E4M3FN>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %ta, %tbt, %z : tensor<64x48xf8E4M3FN>, tensor<48x64xf8E4M3FN> -> tensor<64x64xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// -----

// An 8-bit B tile read as loaded (K x N) only is transposed by the producer
// (transpose-copy.mlir); one also read transposed keeps its loaded layout, so
// the K x N read reaches wgmma MN-major, which it cannot read for 8-bit inputs
// SHAPE: error: tile.dot: its f8E5M2 B operand is stored K x N (MN-major): wgmma reads 8-bit operands only K-major; store B as N x K and transpose the loaded tile (tile.trans)
func.func @fp8_mn_major(%a: !tile.desc<?x?xf8E4M3FN, box = [64, 128]>, %b: !tile.desc<?x?xf8E5M2, box = [128, 128]>,
                        %c: !tile.desc<?x?xf32, box = [64, 128]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xf8E4M3FN, box = [64, 128]> -> tensor<64x128xf8E4M3FN>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xf8E5M2, box = [128, 128]> -> tensor<128x128xf8E5M2>
  %z = arith.constant dense<0.0> : tensor<64x128xf32>
  %d = tile.dot %ta, %tb, %z : tensor<64x128xf8E4M3FN>, tensor<128x128xf8E5M2> -> tensor<64x128xf32>
  %tbt = tile.trans %tb : tensor<128x128xf8E5M2> -> tensor<128x128xf8E5M2>
  %d2 = tile.dot %ta, %tbt, %d : tensor<64x128xf8E4M3FN>, tensor<128x128xf8E5M2> -> tensor<64x128xf32>
  tile.store %d2, %c[%c0, %c0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

// -----

// 128-byte swizzle chunks hold 128 one-byte elements; rows of a multiple of 32
// bytes are cut into 32- or 64-byte chunks (96 bytes: three); 80-byte rows have no
// swizzle, and the product refuses them first: 80 is no whole number of k32 steps
// SHAPE: error: tile.dot: convert-aref-to-nvgpu-async: K = 80: wgmma needs a multiple of 32 for f8E4M3FN inputs
func.func @fp8_rows(%a: !tile.desc<?x?xf8E4M3FN, box = [64, 80]>, %b: !tile.desc<?x?xf8E4M3FN, box = [64, 80]>,
                    %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xf8E4M3FN, box = [64, 80]> -> tensor<64x80xf8E4M3FN>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xf8E4M3FN, box = [64, 80]> -> tensor<64x80xf8E4M3FN>
  %tbt = tile.trans %tb : tensor<64x80xf8E4M3FN> -> tensor<80x64xf8E4M3FN>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %ta, %tbt, %z : tensor<64x80xf8E4M3FN>, tensor<80x64xf8E4M3FN> -> tensor<64x64xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

// -----

// TMA starts a box only on a 16-byte boundary of its rows (the H100 stops with
// an illegal instruction elsewhere): an innermost coordinate that is not a
// provable multiple of 16 bytes is refused at the load.
// SHAPE: error: tile.load: convert-aref-to-nvgpu-async: the innermost coordinate must be a provable multiple of 8 elements (16 bytes)
func.func @off_boundary(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>,
                        %c: !tile.desc<?x?xf32, box = [64, 64]>, %k: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ta = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}

