// A ring the roles do not put, get and release hangs the GPU: the lowering
// refuses it at the aref.create (the simulators would find the hang; the
// lowering printed the kernel).
// RUN: tawa-opt %s --split-input-file --verify-diagnostics -p convert-aref-to-nvgpu-async | filecheck %s

// CHECK: ring-protocol.mlir:8:3: error: aref.create: convert-aref-to-nvgpu-async: ring %ring0 is never released (aref.consumed): the producer would wait forever for a free slot once the ring is full
func.func @gemm_nt(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]}, %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]}, %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %ring0 = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
  aref.warp_specialize consumers = 1 producer {
    %idx0 = arith.constant 0 : index
    %pid_m = tile.program_id x
    %pid_n = tile.program_id y
    %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
    %c0 = arith.constant 0 : index
    %bk = arith.constant {tile.size = "BK"} 64 : index
    %bm = arith.constant {tile.size = "BM"} 128 : index
    %bn = arith.constant {tile.size = "BN"} 128 : index
    %m0 = arith.muli %pid_m, %bm : index
    %n0 = arith.muli %pid_n, %bn : index
    %0 = scf.for %k = %c0 to %K step %bk iter_args(%idx = %idx0) -> (index) {
      %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
      %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
      aref.put %ring0[%idx], %ta, %tb : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
      %1 = arith.constant 1 : index
      %2 = arith.addi %idx, %1 : index
      scf.yield %2 : index
    }
  } consumer {
    %idx0_1 = arith.constant 0 : index
    %pid_m_1 = tile.program_id x
    %pid_n_1 = tile.program_id y
    %K_1 = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
    %c0_1 = arith.constant 0 : index
    %bk_1 = arith.constant {tile.size = "BK"} 64 : index
    %bm_1 = arith.constant {tile.size = "BM"} 128 : index
    %bn_1 = arith.constant {tile.size = "BN"} 128 : index
    %m0_1 = arith.muli %pid_m_1, %bm_1 : index
    %n0_1 = arith.muli %pid_n_1, %bn_1 : index
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
    %acc, %3 = scf.for %k_1 = %c0_1 to %K_1 step %bk_1 iter_args(%acc_k = %zero, %idx_1 = %idx0_1) -> (tensor<128x128xf32>, index) {
      %ta_1, %tb_1 = aref.get %ring0[%idx_1] : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
      %tbt = tile.trans %tb_1 : tensor<128x64xbf16> -> tensor<64x128xbf16>
      %next = tile.dot %ta_1, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
        %4 = arith.constant 1 : index
      %5 = arith.addi %idx_1, %4 : index
      scf.yield %next, %5 : tensor<128x128xf32>, index
    }
    %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
    tile.store %out, %c[%m0_1, %n0_1] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  }
  func.return
}

// -----

// CHECK: ring-protocol.mlir:58:3: error: aref.create: convert-aref-to-nvgpu-async: ring %ring0 is never put: the consumers would wait forever at its aref.get
func.func @gemm_nt(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]}, %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]}, %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %ring0 = aref.create : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
  aref.warp_specialize consumers = 1 producer {
    %idx0 = arith.constant 0 : index
    %pid_m = tile.program_id x
    %pid_n = tile.program_id y
    %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
    %c0 = arith.constant 0 : index
    %bk = arith.constant {tile.size = "BK"} 64 : index
    %bm = arith.constant {tile.size = "BM"} 128 : index
    %bn = arith.constant {tile.size = "BN"} 128 : index
    %m0 = arith.muli %pid_m, %bm : index
    %n0 = arith.muli %pid_n, %bn : index
    %0 = scf.for %k = %c0 to %K step %bk iter_args(%idx = %idx0) -> (index) {
      %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
      %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
      %1 = arith.constant 1 : index
      %2 = arith.addi %idx, %1 : index
      scf.yield %2 : index
    }
  } consumer {
    %idx0_1 = arith.constant 0 : index
    %pid_m_1 = tile.program_id x
    %pid_n_1 = tile.program_id y
    %K_1 = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
    %c0_1 = arith.constant 0 : index
    %bk_1 = arith.constant {tile.size = "BK"} 64 : index
    %bm_1 = arith.constant {tile.size = "BM"} 128 : index
    %bn_1 = arith.constant {tile.size = "BN"} 128 : index
    %m0_1 = arith.muli %pid_m_1, %bm_1 : index
    %n0_1 = arith.muli %pid_n_1, %bn_1 : index
    %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
    %acc, %3 = scf.for %k_1 = %c0_1 to %K_1 step %bk_1 iter_args(%acc_k = %zero, %idx_1 = %idx0_1) -> (tensor<128x128xf32>, index) {
      %ta_1, %tb_1 = aref.get %ring0[%idx_1] : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
      %tbt = tile.trans %tb_1 : tensor<128x64xbf16> -> tensor<64x128xbf16>
      %next = tile.dot %ta_1, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
      aref.consumed %ring0[%idx_1] : !aref.aref<[tensor<128x64xbf16>, tensor<128x64xbf16>], depth = 3>
      %4 = arith.constant 1 : index
      %5 = arith.addi %idx_1, %4 : index
      scf.yield %next, %5 : tensor<128x128xf32>, index
    }
    %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
    tile.store %out, %c[%m0_1, %n0_1] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  }
  func.return
}
