// A GEMM whose K loop counts in i32 and whose loads take their K coordinate
// from a loop-carried index counter, storing the f32 accumulator as it is:
// split-k and stream-k slice the i32 loop and start the counter where each
// slice starts. a: M x K, b: N x K (bf16), c: M x N (f32).
// Grid: (ceil(M / 128), ceil(N / 128)).
func.func @gemm_counter(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %K32 = arith.index_cast %K : index to i32
  %c0 = arith.constant 0 : index
  %zero_i = arith.constant 0 : i32
  %step_i = arith.constant 64 : i32
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bm : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc, %k_last = scf.for %i = %zero_i to %K32 step %step_i iter_args(%acc_i = %zero, %k = %c0) -> (tensor<128x128xf32>, index) : i32 {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_i : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    %k_next = arith.addi %k, %bk : index
    scf.yield %next, %k_next : tensor<128x128xf32>, index
  }
  tile.store %acc, %c[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}
