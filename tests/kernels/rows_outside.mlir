// Kernels with no tile.dot an outside user writes (the second sweep of valid but
// unusual kernels, tests/test_sweep_kernels.py):
//   @silu_mul:   y = bf16(silu(x) * g), 2-D elementwise tiles, no loop.
//                Grid: (ceil(M / 64), ceil(N / 64))
//   @grid3_axpy: y[b] = a[b] * (b + 1) + x[b], [B, M, N] tensors, every grid axis.
//                Grid: (ceil(M / 64), ceil(N / 128), B)

func.func @silu_mul(%x: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %g: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]},
    %y: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c64 : index
  %xt = tile.load %x[%m0, %n0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %gt = tile.load %g[%m0, %n0] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
  %xf = arith.extf %xt : tensor<64x64xbf16> to tensor<64x64xf32>
  %gf = arith.extf %gt : tensor<64x64xbf16> to tensor<64x64xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
  %neg = arith.negf %xf : tensor<64x64xf32>
  %e = math.exp %neg : tensor<64x64xf32>
  %d = arith.addf %e, %one : tensor<64x64xf32>
  %s = arith.divf %xf, %d : tensor<64x64xf32>
  %h = arith.mulf %s, %gf : tensor<64x64xf32>
  %out = arith.truncf %h : tensor<64x64xf32> to tensor<64x64xbf16>
  tile.store %out, %y[%m0, %n0] : tensor<64x64xbf16> -> !tile.desc<?x?xbf16, box = [64, 64]>
  func.return
}

func.func @grid3_axpy(%a: !tile.desc<?x?x?xf32, box = [1, 64, 128]> {tile.dims = ["B", "M", "N"]},
    %x: !tile.desc<?x?x?xf32, box = [1, 64, 128]> {tile.dims = ["B", "M", "N"]},
    %y: !tile.desc<?x?x?xf32, box = [1, 64, 128]> {tile.dims = ["B", "M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %bz = tile.program_id z
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %at = tile.load %a[%bz, %m0, %n0] : !tile.desc<?x?x?xf32, box = [1, 64, 128]> -> tensor<64x128xf32>
  %xt = tile.load %x[%bz, %m0, %n0] : !tile.desc<?x?x?xf32, box = [1, 64, 128]> -> tensor<64x128xf32>
  %b1 = arith.addi %bz, %c1 : index
  %b1_i32 = arith.index_cast %b1 : index to i32
  %b1_f = arith.sitofp %b1_i32 : i32 to f32
  %w = tile.splat %b1_f : f32 -> tensor<64x128xf32>
  %ax = arith.mulf %at, %w : tensor<64x128xf32>
  %r = arith.addf %ax, %xt : tensor<64x128xf32>
  tile.store %r, %y[%bz, %m0, %n0] : tensor<64x128xf32> -> !tile.desc<?x?x?xf32, box = [1, 64, 128]>
  func.return
}
