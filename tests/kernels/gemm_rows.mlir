// A GEMM whose programs each compute `%rows` rows of C (a scalar, a multiple of
// 64) in 64-row tiles, 128 columns wide (written 2 x 64). The launch grid follows
// from a scalar and a constant expression: (ceil(M / rows), ceil(N / 128)); the
// store's row coordinate is program_id(x) * rows plus the tile's row offset.
// `persistent` reads that rule off the store (it once asked for grid=, which
// tawa-opt cannot give). 64-row tiles: one consumer warpgroup.
// a: M x K, b: N x K (bf16), c: M x N.
func.func @gemm_rows(%a: !tile.desc<?x?xbf16, box = [64, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %c: !tile.desc<?x?xbf16, box = [64, 128]>, %rows: i32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %bn = arith.muli %c2, %c64 : index
  %rows_i = arith.index_cast %rows : i32 to index
  %m0 = arith.muli %pid_m, %rows_i : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  scf.for %r = %c0 to %rows_i step %c64 {
    %m = arith.addi %m0, %r : index
    %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x128xf32>) {
      %ta = tile.load %a[%m, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
      %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
      %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
      %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
      scf.yield %next : tensor<64x128xf32>
    }
    %out = arith.truncf %acc : tensor<64x128xf32> to tensor<64x128xbf16>
    tile.store %out, %c[%m, %n0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  }
  func.return
}
