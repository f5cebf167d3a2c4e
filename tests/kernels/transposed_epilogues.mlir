// GEMMs storing an epilogue that reads the accumulator twice, transposed
// (Ct = f(A B^T)^T stored N x M). Canonicalization moves the transposes up
// through the epilogue once every read of a value is transposed, so the dot
// is computed once, as B A^T (was refused: "a register tile cannot be
// transposed", the transpose stopping at the accumulator's second read).
//
//   @gemm_trans_twice: Ct = bf16(acc + relu(acc))^T, acc = A B^T
//   @gemm_trans_silu:  Ct = (acc * sigmoid(acc))^T in f32 (the two reads a product)
// Grids: (ceil(M / 128), ceil(N / 64)).
func.func @gemm_trans_twice(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %ct: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["N", "M"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %next : tensor<128x64xf32>
  }
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %relu = arith.maximumf %acc, %zeros : tensor<128x64xf32>
  %x = arith.addf %acc, %relu : tensor<128x64xf32>
  %out = arith.truncf %x : tensor<128x64xf32> to tensor<128x64xbf16>
  %out_t = tile.trans %out : tensor<128x64xbf16> -> tensor<64x128xbf16>
  tile.store %out_t, %ct[%n0, %m0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}

func.func @gemm_trans_silu(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["N", "K"]},
    %ct: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["N", "M"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x64xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<64x64xbf16> -> tensor<64x64xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x64xbf16> -> tensor<128x64xf32>
    scf.yield %next : tensor<128x64xf32>
  }
  %one = arith.constant dense<1.000000e+00> : tensor<128x64xf32>
  %neg = arith.negf %acc : tensor<128x64xf32>
  %e = math.exp %neg : tensor<128x64xf32>
  %den = arith.addf %e, %one : tensor<128x64xf32>
  %sig = arith.divf %one, %den : tensor<128x64xf32>
  %silu = arith.mulf %acc, %sig : tensor<128x64xf32>
  %silu_t = tile.trans %silu : tensor<128x64xf32> -> tensor<64x128xf32>
  tile.store %silu_t, %ct[%n0, %m0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}
