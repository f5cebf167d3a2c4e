// What convert-aref-to-nvgpu-async refuses, one minimal aref kernel each, with
// the diagnostic at the op at fault.
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p convert-aref-to-nvgpu-async | filecheck %s
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p "convert-aref-to-nvgpu-async{tma-store=false}" | filecheck %s --check-prefix=DIRECT
// CHECK: {{.*}}refusals.mlir:7:5: error: arith.constant: convert-aref-to-nvgpu-async expects only aref.create and one aref.warp_specialize at the top of a kernel
func.func @top(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %x = arith.constant 1 : index
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:53:7: error: tile.dot: convert-aref-to-nvgpu-async: N = 36: wgmma needs a multiple of 8 up to 256
func.func @ndot(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      %p = arith.constant dense<0.0> : tensor<64x36xbf16>
      %z2 = arith.constant dense<0.0> : tensor<64x36xf32>
      %d2 = tile.dot %ta, %p, %z2 : tensor<64x64xbf16>, tensor<64x36xbf16> -> tensor<64x36xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:64:1: error: func.func: convert-aref-to-nvgpu-async: @multicast runs in clusters of 2 but no producer load is the same in every block of a cluster (each depends on program_id(x) or on a loop or branch that does): there is nothing to multicast; drop the cluster pass
func.func @multicast(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel, tile.cluster = 2 : i64} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %p = tile.program_id x
      %ta = tile.load %a[%p, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%p, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:92:1: error: func.func: convert-aref-to-nvgpu-async: the aref rings need 262656 bytes of shared memory; a block can have 231424. Use fewer stages or smaller tiles
func.func @smem(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 16>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 16>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 16>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 16>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 16>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 16>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 16>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 16>
      tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:127:7: error: aref.put: convert-aref-to-nvgpu-async: aref.put must carry tiles loaded only for it
func.func @put(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      %t2 = tile.trans %ta : tensor<64x64xbf16> -> tensor<64x64xbf16>
      aref.put %ra[%i], %t2 : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:149:3: error: aref.warp_specialize: convert-aref-to-nvgpu-async: aref.consumed frees a slot before the tile.dot that reads it
func.func @release(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %ring0 = aref.create : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 1>
  aref.warp_specialize consumers = 1 producer {
    %idx0 = arith.constant 0 : index
    %c0 = arith.constant 0 : index
    %c64 = arith.constant 64 : index
    %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
    %0 = scf.for %k = %c0 to %K step %c64 iter_args(%idx = %idx0) -> (index) {
      %ta = tile.load %a[%c0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      %tb = tile.load %b[%k, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ring0[%idx], %ta, %tb : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 1>
      %1 = arith.constant 1 : index
      %2 = arith.addi %idx, %1 : index
      scf.yield %2 : index
    }
  } consumer {
    %idx0_1 = arith.constant 0 : index
    %c0_1 = arith.constant 0 : index
    %c64_1 = arith.constant 64 : index
    %K_1 = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
    %z = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
    %acc, %3 = scf.for %k_1 = %c0_1 to %K_1 step %c64_1 iter_args(%acc_k = %z, %idx_1 = %idx0_1) -> (tensor<64x64xf32>, index) {
      %ta_1, %tb_1 = aref.get %ring0[%idx_1] : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 1>
      aref.consumed %ring0[%idx_1] : !aref.aref<[tensor<64x64xbf16>, tensor<64x64xbf16>], depth = 1>
      %d = tile.dot %ta_1, %tb_1, %acc_k : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      %4 = arith.constant 1 : index
      %5 = arith.addi %idx_1, %4 : index
      scf.yield %d, %5 : tensor<64x64xf32>, index
    }
    tile.store %acc, %c[%c0_1, %c0_1] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  }
  func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:203:7: error: tile.trans: convert-aref-to-nvgpu-async: a register tile cannot be transposed, and this transpose cannot move up: %d is a tile.dot of other operands than A as loaded and B loaded (N x K and transposed, or 16-bit K x N), which swapped would not read as wgmma takes them; transpose tiles as they come from shared memory (or store a 16-bit or f32 matrix tile transposed)
func.func @trans(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %dt = tile.trans %d : tensor<64x64xf32> -> tensor<64x64xf32>
      %e = arith.negf %dt : tensor<64x64xf32>  tile.store %e, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:231:7: error: tile.reduce: convert-aref-to-nvgpu-async: cannot place the tensor<64xf32> value %r in registers: conflicting (col, row) layout constraints
func.func @place(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %r = tile.reduce sum %d, axis = 1 : tensor<64x64xf32> -> tensor<64xf32>
      %e = tile.expand_dims %r, axis = 0 : tensor<64xf32> -> tensor<1x64xf32>
      %bb = tile.broadcast %e : tensor<1x64xf32> -> tensor<64x64xf32>
      tile.store %bb, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:260:7: error: tile.dot: convert-aref-to-nvgpu-async: the B operand of tile.dot must come from shared memory (an aref tile)
func.func @bop(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      %p = arith.truncf %d : tensor<64x64xf32> to tensor<64x64xbf16>
      %d2 = tile.dot %ta, %p, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      tile.store %d2, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:288:7: error: tile.dot: convert-aref-to-nvgpu-async: a transposed 8-bit A operand is not supported (wgmma reads 8-bit operands K-major only); load A as M x K
func.func @atrans(%a: !tile.desc<?x?xf8E4M3FN, box = [64, 64]>, %b: !tile.desc<?x?xf8E4M3FN, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xf8E4M3FN>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xf8E4M3FN>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xf8E4M3FN, box = [64, 64]> -> tensor<64x64xf8E4M3FN>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xf8E4M3FN>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xf8E4M3FN, box = [64, 64]> -> tensor<64x64xf8E4M3FN>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xf8E4M3FN>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xf8E4M3FN>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xf8E4M3FN>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %tat = tile.trans %ta : tensor<64x64xf8E4M3FN> -> tensor<64x64xf8E4M3FN>
      %d = tile.dot %tat, %tb, %z : tensor<64x64xf8E4M3FN>, tensor<64x64xf8E4M3FN> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xf8E4M3FN>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xf8E4M3FN>], depth = 1>
      tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:319:7: error: tile.store: convert-aref-to-nvgpu-async: reads %ta from its slot after aref.consumed released it: store it first
// DIRECT: {{.*}}refusals.mlir:319:7: error: tile.store: convert-aref-to-nvgpu-async: reads %ta from its slot after aref.consumed released it: store it first
func.func @read(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %o: !tile.desc<?x?xbf16, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      tile.store %ta, %o[%c0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
      tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----

// CHECK: {{.*}}refusals.mlir:347:7: error: arith.constant: convert-aref-to-nvgpu-async: only splat constants can live in register tiles
func.func @splat(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %k = arith.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0]> : tensor<64xf32>
      %e = tile.expand_dims %k, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
      %bb = tile.broadcast %e : tensor<64x1xf32> -> tensor<64x64xf32>
      %s = arith.addf %d, %bb : tensor<64x64xf32>
      tile.store %s, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}

// -----
// CHECK: {{.*}}refusals.mlir:378:7: error: tile.store: convert-aref-to-nvgpu-async: reads %ta from its slot after aref.consumed released it: store it first
// DIRECT: {{.*}}refusals.mlir:378:7: error: tile.store: convert-aref-to-nvgpu-async: tile.store into %a, which the producer also loads: such a tensor is stored through TMA with its loads' tensor map, and this store cannot be: tma_store is off
func.func @loaded(%a: !tile.desc<?x?xbf16, box = [64, 64]>, %b: !tile.desc<?x?xbf16, box = [64, 64]>, %c: !tile.desc<?x?xf32, box = [64, 64]>, %o: !tile.desc<?x?xbf16, box = [64, 64]>) attributes {tile.kernel} {
    %ra = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    %rb = aref.create : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    aref.warp_specialize consumers = 1 producer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = tile.load %a[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %ra[%i], %ta : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = tile.load %b[%c0, %c0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      aref.put %rb[%i], %tb : !aref.aref<[tensor<64x64xbf16>], depth = 1>
    } consumer {
      %i = arith.constant 0 : index
      %c0 = arith.constant 0 : index
      %ta = aref.get %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %tb = aref.get %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      %z = arith.constant dense<0.0> : tensor<64x64xf32>
      %d = tile.dot %ta, %tb, %z : tensor<64x64xbf16>, tensor<64x64xbf16> -> tensor<64x64xf32>
      aref.consumed %ra[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      aref.consumed %rb[%i] : !aref.aref<[tensor<64x64xbf16>], depth = 1>
      tile.store %ta, %a[%c0, %c0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
      tile.store %d, %c[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
    }
    func.return
}
