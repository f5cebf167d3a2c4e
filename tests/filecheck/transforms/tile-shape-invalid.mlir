// What tile-shape cannot resize gets a diagnostic naming the op or parameter.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p 'tile-shape{block-m=64 block-n=64}' | filecheck %s
// RUN: not tawa-opt %S/../../kernels/gemm_outside.mlir -p 'tile-shape{block-n=256}' 2>&1 | filecheck %s --check-prefix=UNNAMED
// RUN: not tawa-opt %examples/gemm.mlir -p 'tile-shape{block-n=1}' 2>&1 | filecheck %s --check-prefix=SMALL
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,tile-shape{block-n=64}' 2>&1 | filecheck %s --check-prefix=ORDER
// RUN: not tawa-opt %examples/gemm.mlir -p 'tile-shape{block-n=512}' 2>&1 | filecheck %s --check-prefix=BOX
// RUN: not tawa-opt %examples/gemm.mlir -p 'persistent,tile-shape{block-n=256}' 2>&1 | filecheck %s --check-prefix=PERSISTENT
// RUN: not tawa-opt %examples/gemm.mlir -p 'reverse-grid,tile-shape{block-m=64}' 2>&1 | filecheck %s --check-prefix=REVERSED
// RUN: sed 's/%%n0 = arith.muli %%pid_n, %%bn/%%n0 = arith.muli %%pid_n, %%bm/' %examples/gemm.mlir | not tawa-opt -p 'tile-shape{block-n=64}' 2>&1 | filecheck %s --check-prefix=OTHER-TAG

// A square product ties rows to columns: BM and BN cannot differ.
func.func @square(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.box = ["BM", "BN"]}, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %d = tile.dot %t, %t, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
  tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: func.func: tile-shape: BM and BN are the same tile dimension in @square; they cannot be sized apart

// -----

func.func @tag_disagrees(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.box = ["BM", ""]}, %c: !tile.desc<?x?xbf16, box = [64, 64]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %m0 = arith.muli %pid, %bm : index
  %c0 = arith.constant 0 : index
  %t = tile.load %a[%m0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  tile.store %t, %c[%m0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}
// CHECK: error: arith.constant: tile-shape: the constant tagged BM is 128 but BM is 64

// -----

func.func @unknown_name(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.box = ["BQ", ""]}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %z = arith.constant dense<0.0> : tensor<64x64xbf16>
  tile.store %z, %a[%c0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}
// CHECK: error: func.func: tile-shape: tile.box of %a names an unknown tile dimension 'BQ'; the names are BM, BN, BK


// -----

// Region ops a tile kernel does not have are named as such.
func.func @region(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = scf.execute_region -> tensor<64x64xf32> {
    %l = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
    scf.yield %l : tensor<64x64xf32>
  }
  tile.store %t, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: error: scf.execute_region: tile-shape: scf.execute_region is not control flow a tile kernel has (scf.for, scf.while and scf.if are)
// UNNAMED: tawa-opt: {{.*}}gemm_outside.mlir:{{[0-9]+}}:1: error: func.func: tile-shape: @gemm_alpha_beta does not name BN; tag its box axes with tile.box and its index constants with tile.size
// SMALL: tawa-opt: tile-shape: BN must be at least 2, got 1
// ORDER: tawa-opt: {{.*}}gemm.mlir:{{[0-9]+}}:1: error: func.func: tile-shape takes tile IR, but kernel @gemm_nt is aref IR (made by aref-partition): run tile-shape before aref-partition
// PERSISTENT: error: func.func: tile-shape: kernel @gemm_nt has a launch grid recorded by persistent (its tile count follows the old shape); run tile-shape before persistent
// REVERSED: error: func.func: tile-shape: kernel @gemm_nt has a launch grid recorded by reverse-grid (its tile count follows the old shape); run tile-shape before reverse-grid
// BOX: tawa-opt: tile-shape: BN must be at most 256 (a TMA box dimension), got 512

// -----

// A tile offset whose stride is not tagged would keep its written size while
// the boxes shrink: rows 64..127 of each 128-row block never written (it was
// resized silently). The same for a K loop's untagged step (BN here).
func.func @untagged_offset(%a: !tile.desc<?x?xf32, box = [128, 128]> {tile.box = ["BM", "BN"]}, %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.box = ["BM", "BN"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  // CHECK: tile-shape-invalid.mlir:[[# @LINE + 1]]:3: error: arith.constant: tile-shape: this 128 is in the coordinate of tile.load (line [[# @LINE + 7]]) along its BM axis, which becomes 64, but it would stay 128 (it is not tagged); write arith.constant {tile.size = "BM"} 128
  %bm = arith.constant 128 : index
  %m0 = arith.muli %pid, %bm : index
  %N = tile.dim %a, 1 : !tile.desc<?x?xf32, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  scf.for %n = %c0 to %N step %bn {
    %t = tile.load %a[%m0, %n] : !tile.desc<?x?xf32, box = [128, 128]> -> tensor<128x128xf32>
    tile.store %t, %c[%m0, %n] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  }
  func.return
}

// -----

func.func @untagged_step(%a: !tile.desc<?x?xf32, box = [128, 128]> {tile.box = ["BM", "BN"]}, %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.box = ["BM", "BN"]}) attributes {tile.kernel} {
  %pid = tile.program_id x
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %m0 = arith.muli %pid, %bm : index
  %N = tile.dim %a, 1 : !tile.desc<?x?xf32, box = [128, 128]>
  %c0 = arith.constant 0 : index
  // CHECK: tile-shape-invalid.mlir:[[# @LINE + 1]]:3: error: arith.constant: tile-shape: this 128 is in the coordinate of tile.load (line [[# @LINE + 3]]) along its BN axis, which becomes 64, but it would stay 128 (it is not tagged); write arith.constant {tile.size = "BN"} 128
  %bn = arith.constant 128 : index
  scf.for %n = %c0 to %N step %bn {
    %t = tile.load %a[%m0, %n] : !tile.desc<?x?xf32, box = [128, 128]> -> tensor<128x128xf32>
    tile.store %t, %c[%m0, %n] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  }
  func.return
}

// The N offset strided by the constant tagged BM: resizing BN alone left it 128.
// OTHER-TAG: stdin:17:3: error: arith.constant: tile-shape: this 128 is in the coordinate of tile.load (line 24) along its BN axis, which becomes 64, but it would stay 128 (it is tagged BM); write arith.constant {tile.size = "BN"} 128
