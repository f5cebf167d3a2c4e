// GEMM-like kernels an outside user writes (the second sweep of valid but unusual
// kernels, tests/test_sweep_kernels.py):
//   @gemm_alpha_beta: C = alpha A B^T + beta C, the output read as an input (f32)
//   @gemm_gelu_f16:   C = f32(gelu_tanh(A B^T)), f16 inputs, f32 output
//   @gemm_klimit:     C = A[:, :L] B[:, :L]^T: a main K loop over whole blocks and a
//                     remainder loop masking A's columns past L (a scalar) in f32
//   @gemm_skip:       C = A B^T over the K blocks outside [lo, hi) (scalars): an scf.if
//                     around the dot inside the K loop (the loads stay unconditional)
// Grids: (ceil(M / 64), ceil(N / 128)).

func.func @gemm_alpha_beta(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]},
    %alpha: f32, %beta: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %next : tensor<64x128xf32>
  }
  %old = tile.load %c[%m0, %n0] : !tile.desc<?x?xf32, box = [64, 128]> -> tensor<64x128xf32>
  %al = tile.splat %alpha : f32 -> tensor<64x128xf32>
  %be = tile.splat %beta : f32 -> tensor<64x128xf32>
  %x = arith.mulf %acc, %al : tensor<64x128xf32>
  %y = arith.mulf %old, %be : tensor<64x128xf32>
  %z = arith.addf %x, %y : tensor<64x128xf32>
  tile.store %z, %c[%m0, %n0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

func.func @gemm_gelu_f16(%a: !tile.desc<?x?xf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf16, box = [64, 64]> -> tensor<64x64xf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf16, box = [128, 64]> -> tensor<128x64xf16>
    %tbt = tile.trans %tb : tensor<128x64xf16> -> tensor<64x128xf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xf16>, tensor<64x128xf16> -> tensor<64x128xf32>
    scf.yield %next : tensor<64x128xf32>
  }
  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
  %half = arith.constant dense<5.000000e-01> : tensor<64x128xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<64x128xf32>
  %k0 = arith.constant dense<0.797884583> : tensor<64x128xf32>
  %k1 = arith.constant dense<4.471500e-02> : tensor<64x128xf32>
  %x2 = arith.mulf %acc, %acc : tensor<64x128xf32>
  %x3 = arith.mulf %x2, %acc : tensor<64x128xf32>
  %cx3 = arith.mulf %x3, %k1 : tensor<64x128xf32>
  %in = arith.addf %acc, %cx3 : tensor<64x128xf32>
  %arg = arith.mulf %in, %k0 : tensor<64x128xf32>
  %t = math.tanh %arg : tensor<64x128xf32>
  %t1 = arith.addf %t, %one : tensor<64x128xf32>
  %hx = arith.mulf %acc, %half : tensor<64x128xf32>
  %g = arith.mulf %hx, %t1 : tensor<64x128xf32>
  tile.store %g, %c[%m0, %n0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

func.func @gemm_klimit(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [64, 128]> {tile.dims = ["M", "N"]},
    %limit: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %blocks = arith.divui %limit, %c64 : index
  %main_end = arith.muli %blocks, %c64 : index
  %acc1 = scf.for %k = %c0 to %main_end step %c64 iter_args(%acc_k = %zero) -> (tensor<64x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %next : tensor<64x128xf32>
  }
  %lim_i32 = arith.index_cast %limit : index to i32
  %lim_t = tile.splat %lim_i32 : i32 -> tensor<64x64xi32>
  %iota = tile.iota : tensor<64xi32>
  %cols = tile.expand_dims %iota, axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %zero_a = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %acc2 = scf.for %k = %main_end to %limit step %c64 iter_args(%acc_k = %acc1) -> (tensor<64x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %k_i32 = arith.index_cast %k : index to i32
    %k_row = tile.splat %k_i32 : i32 -> tensor<1x64xi32>
    %kcols = arith.addi %cols, %k_row : tensor<1x64xi32>
    %kcols_b = tile.broadcast %kcols : tensor<1x64xi32> -> tensor<64x64xi32>
    %inside = tile.cmpi slt, %kcols_b, %lim_t : tensor<64x64xi32> -> tensor<64x64xi1>
    %taf = arith.extf %ta : tensor<64x64xbf16> to tensor<64x64xf32>
    %tamf = tile.select %inside, %taf, %zero_a : tensor<64x64xi1>, tensor<64x64xf32>
    %tam = arith.truncf %tamf : tensor<64x64xf32> to tensor<64x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %tam, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %next : tensor<64x128xf32>
  }
  tile.store %acc2, %c[%m0, %n0] : tensor<64x128xf32> -> !tile.desc<?x?xf32, box = [64, 128]>
  func.return
}

func.func @gemm_skip(%a: !tile.desc<?x?xbf16, box = [64, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [64, 128]> {tile.dims = ["M", "N"]},
    %lo: index, %hi: index) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [64, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c64 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<64x128xf32>) {
    %below = arith.cmpi ult, %k, %lo : index
    %above = arith.cmpi uge, %k, %hi : index
    %keep = arith.ori %below, %above : i1
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [64, 64]> -> tensor<64x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %r = scf.if %keep -> (tensor<64x128xf32>) {
      %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
      %next = tile.dot %ta, %tbt, %acc_k : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
      scf.yield %next : tensor<64x128xf32>
    } else {
      scf.yield %acc_k : tensor<64x128xf32>
    }
    scf.yield %r : tensor<64x128xf32>
  }
  %out = arith.truncf %acc : tensor<64x128xf32> to tensor<64x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}
