// GEMM-like kernels an outside user writes (the eighth sweep of valid but unusual
// kernels, tests/test_sweep_kernels.py):
//   @gemm_gated_a:  C = f32(bf16(X * G) B^T): the dot's A operand the product of two
//                   loaded tiles, rounded to bf16 in registers each K step
//   @gemm_two_a:    C = f32(X1 B^T + X2 B^T): two dots an iteration chained on one
//                   accumulator, both reading the same loaded B tile
//   @gemm_rrc:      C32 = f32(rs[m] A B^T) and C16 = bf16(max(tanh(z), min(2^z, 2))),
//                   z = rs[m] A B^T + rb[m] + cb[n]: two row vectors and a column vector
//                   in one epilogue, an f32 and a bf16 output of one accumulator
//   @gemm_kpair:    C = f32(sum over k in [128 k0, kend) step 128 of A[:, k:k+128]
//                   B[:, k:k+128]^T): two 64-wide K halves loaded and multiplied an
//                   iteration, the loop's bounds from scalar arguments, and the output
//                   tile picked from a 1-D grid by arith.divsi / arith.remsi by the
//                   number of column tiles (arith.ceildivsi of tile.dim)
//   @gemm_col_major_e4m3: C8 = e4m3(s A B^T): an FP8 output of a 16-bit GEMM whose
//                   programs walk the tiles down the columns first (pid % tiles_m,
//                   pid / tiles_m, signed) (was refused: "8-bit float tiles are stored
//                   through TMA only": signed quotients and remainders were not known
//                   non-negative, so the store went from registers)
//   @gemm_w8a:      Ct = f32(ws[n] (W X^T)): int8 weights (N x K) dequantized in
//                   registers (tile.extsi, tile.sitofp, bf16) as the dot's A operand, a
//                   per-row scale, the output N x M (a computed B operand is refused at
//                   the dot: wgmma reads B from shared memory only)
// Grids: (ceil(M / 128), ceil(N / 128)) (@gemm_kpair, @gemm_col_major_e4m3:
// (ceil(M / 128) ceil(N / 128),); @gemm_w8a: (ceil(N / 128), ceil(M / 128))).

// C = f32(bf16(X * G) B^T): A in registers, the elementwise product of two loads.
func.func @gemm_gated_a(%x: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %g: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %x, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %tx = tile.load %x[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tg = tile.load %g[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %xf = arith.extf %tx : tensor<128x64xbf16> to tensor<128x64xf32>
    %gf = arith.extf %tg : tensor<128x64xbf16> to tensor<128x64xf32>
    %pf = arith.mulf %xf, %gf : tensor<128x64xf32>
    %ta = arith.truncf %pf : tensor<128x64xf32> to tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}

// C = f32(X1 B^T + X2 B^T): two dots an iteration on one accumulator and one B tile.
func.func @gemm_two_a(%x1: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %x2: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %x1, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %t1 = tile.load %x1[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %t2 = tile.load %x2[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %half = tile.dot %t1, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    %next = tile.dot %t2, %tbt, %half : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}

// C32 = f32(rs[m] A B^T), C16 = bf16(max(tanh(z), min(2^z, 2))) with
// z = rs[m] A B^T + rb[m] + cb[n].
func.func @gemm_rrc(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %rs: !tile.desc<?xf32, box = [128]> {tile.dims = ["M"]},
    %rb: !tile.desc<?xf32, box = [128]> {tile.dims = ["M"]},
    %cb: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %c32: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]},
    %c16: !tile.desc<?x?xbf16, box = [128, 128]> {tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %rs_t = tile.load %rs[%m0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %rb_t = tile.load %rb[%m0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %cb_t = tile.load %cb[%n0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %rs_e = tile.expand_dims %rs_t, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %rs_b = tile.broadcast %rs_e : tensor<128x1xf32> -> tensor<128x128xf32>
  %rb_e = tile.expand_dims %rb_t, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %rb_b = tile.broadcast %rb_e : tensor<128x1xf32> -> tensor<128x128xf32>
  %cb_e = tile.expand_dims %cb_t, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %cb_b = tile.broadcast %cb_e : tensor<1x128xf32> -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %rs_b : tensor<128x128xf32>
  tile.store %scaled, %c32[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  %z1 = arith.addf %scaled, %rb_b : tensor<128x128xf32>
  %z = arith.addf %z1, %cb_b : tensor<128x128xf32>
  %th = math.tanh %z : tensor<128x128xf32>
  %ex = math.exp2 %z : tensor<128x128xf32>
  %two = arith.constant dense<2.000000e+00> : tensor<128x128xf32>
  %capped = arith.minimumf %ex, %two : tensor<128x128xf32>
  %w = arith.maximumf %th, %capped : tensor<128x128xf32>
  %w16 = arith.truncf %w : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %w16, %c16[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// C = f32(sum over k in [128 k0, kend) step 128 of A[:, k:k+128] B[:, k:k+128]^T), each
// 128-wide K block as two 64-wide halves; program p computes tile (p / tn, p % tn).
func.func @gemm_kpair(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["M", "N"]},
    %k0: index, %kend: index) attributes {tile.kernel} {
  %pid = tile.program_id x
  %N = tile.dim %b, 0 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %tn = arith.ceildivsi %N, %c128 : index
  %pid_m = arith.divsi %pid, %tn : index
  %pid_n = arith.remsi %pid, %tn : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %kstart = arith.muli %k0, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %kstart to %kend step %c128 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %kh = arith.addi %k, %c64 : index
    %ta0 = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb0 = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %ta1 = tile.load %a[%m0, %kh] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb1 = tile.load %b[%n0, %kh] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt0 = tile.trans %tb0 : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %tbt1 = tile.trans %tb1 : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %half = tile.dot %ta0, %tbt0, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    %next = tile.dot %ta1, %tbt1, %half : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  tile.store %acc, %c[%m0, %n0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}

// C8 = e4m3(s A B^T), program p computing tile (p % tiles_m, p / tiles_m).
func.func @gemm_col_major_e4m3(%a: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["N", "K"]},
    %c8: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["M", "N"]},
    %s: f32) attributes {tile.kernel} {
  %pid = tile.program_id x
  %M = tile.dim %a, 0 : !tile.desc<?x?xbf16, box = [128, 64]>
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %tm = arith.ceildivsi %M, %c128 : index
  %pid_m = arith.remsi %pid, %tm : index
  %pid_n = arith.divsi %pid, %tm : index
  %m0 = arith.muli %pid_m, %c128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %s_t = tile.splat %s : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %s_t : tensor<128x128xf32>
  %out = arith.truncf %scaled : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
  tile.store %out, %c8[%m0, %n0] : tensor<128x128xf8E4M3FN> -> !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  func.return
}

// Ct = f32(ws[n] (W X^T)), W int8 dequantized in registers each K step.
func.func @gemm_w8a(%w: !tile.desc<?x?xi8, box = [128, 64]> {tile.dims = ["N", "K"]},
    %x: !tile.desc<?x?xbf16, box = [128, 64]> {tile.dims = ["M", "K"]},
    %ws: !tile.desc<?xf32, box = [128]> {tile.dims = ["N"]},
    %ct: !tile.desc<?x?xf32, box = [128, 128]> {tile.dims = ["N", "M"]}) attributes {tile.kernel} {
  %pid_n = tile.program_id x
  %pid_m = tile.program_id y
  %K = tile.dim %w, 1 : !tile.desc<?x?xi8, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %n0 = arith.muli %pid_n, %c128 : index
  %m0 = arith.muli %pid_m, %c128 : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %c64 iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %tw = tile.load %w[%n0, %k] : !tile.desc<?x?xi8, box = [128, 64]> -> tensor<128x64xi8>
    %tw32 = tile.extsi %tw : tensor<128x64xi8> -> tensor<128x64xi32>
    %twf = tile.sitofp %tw32 : tensor<128x64xi32> -> tensor<128x64xf32>
    %twb = arith.truncf %twf : tensor<128x64xf32> to tensor<128x64xbf16>
    %tx = tile.load %x[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %txt = tile.trans %tx : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %twb, %txt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %s_t = tile.load %ws[%n0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %s_c = tile.expand_dims %s_t, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %s_b = tile.broadcast %s_c : tensor<128x1xf32> -> tensor<128x128xf32>
  %y = arith.mulf %acc, %s_b : tensor<128x128xf32>
  tile.store %y, %ct[%n0, %m0] : tensor<128x128xf32> -> !tile.desc<?x?xf32, box = [128, 128]>
  func.return
}
