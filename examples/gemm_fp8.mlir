// FP8 GEMM: C (bf16) = (A @ B^T) * scale. A is M x K and B is N x K, row-major,
// 8-bit floats (e4m3; the mixed kernel takes B in e5m2), products accumulated in
// f32. Both operands are K-major, the only layout wgmma reads 8-bit inputs in:
// B tiles are loaded N x K and transposed (tile.trans), never loaded K x N.
// A 128-wide K step is 128 bytes: one 128-byte swizzle chunk, four k32 wgmmas.
// Edge tiles of any M, N, K read zeros and are stored clipped.
// Grid: (ceil(M / 128), ceil(N / 128)).
//
//   @gemm_fp8_tensorwise:  C = bf16((A @ B^T) * (scale_a * scale_b)), two f32 scalars
//   @gemm_fp8_e4m3_e5m2:   the same with B in e5m2 (wgmma mixes 8-bit formats)
//   @gemm_fp8_e4m3_out:    C in e4m3 = e4m3((A @ B^T) * (scale_a * scale_b / scale_c)),
//                          rounded to nearest even and saturated at +-448 (cvt.rn.satfinite):
//                          an FP8 layer feeding the next
//   @gemm_fp8_rowwise:     C = bf16((A @ B^T) * outer(scale_a, scale_b)), scale_a one
//                          f32 per row of A (M), scale_b one per row of B (N)
//   @gemm_fp8_blockwise:   DeepSeek-V3 block scaling: A scaled per 1 x 128 group along
//                          K, B per 128 x 128 block. Each 128-wide K block's product
//                          goes into its own zeroed accumulator, is multiplied by
//                          outer(A's row scales of the block, B's block scale) and
//                          added to the f32 sum in registers (promotion: the tensor
//                          cores' FP8 accumulation alone loses precision over long K).
//                          scale_a holds the M x K/128 group scales transposed,
//                          K/128 x M (as DeepGEMM takes them): one K block's scales
//                          of 128 rows are then one TMA box, while a column of an
//                          M x K/128 tensor is 4 bytes a row and TMA moves at least
//                          16. scale_b is N/128 x K/128; a box of 4 (16 bytes) starts
//                          at the 16-byte boundary below the block's scale (TMA
//                          starts a box nowhere else), and the block's element is
//                          picked out of the four by tile.extract and selects. BN and BK stay 128, the scale block (unnamed for
//                          tile-shape), BM may change. On a GPU the scale tensors'
//                          rows must be 16-byte multiples: M % 4 == 0 for scale_a and
//                          (K/128) % 4 == 0 for scale_b, or padded rows (strides).
//   @gemm_fp8_blockwise_overlap: the same product, two K blocks an iteration: both
//                          blocks' partial products are issued (two MMA groups into
//                          two zeroed accumulators) before the first is promoted, so
//                          its promotion waits for one group and runs while the
//                          tensor cores compute the second (one K block an iteration
//                          waits for its only group: the tensor cores idle while each
//                          consumer warpgroup promotes). ptxas follows MMA groups only
//                          within an iteration (a partial carried to the next one and
//                          read there after wait_group 1 serializes every wgmma,
//                          C7514), so the second block's promotion still waits for
//                          all. A slot holds both blocks (66576 bytes: two stages);
//                          one box of B's scales serves both (an even block and the
//                          odd one after it share their 16-byte group), and block j+1's
//                          scale is read after block j's promotion, where the slot
//                          goes back. With an odd number of K blocks the last
//                          iteration's second block lies past K: its boxes read zeros
//                          (tiles and A's scales) and it adds nothing. Same
//                          arguments and result as @gemm_fp8_blockwise.

func.func @gemm_fp8_tensorwise(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %scale_a: f32, %scale_b: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 128 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tbt = tile.trans %tb : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %scale = arith.mulf %scale_a, %scale_b : f32
  %scale_t = tile.splat %scale : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %scale_t : tensor<128x128xf32>
  %out = arith.truncf %scaled : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @gemm_fp8_e4m3_e5m2(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E5M2, box = [128, 128]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %scale_a: f32, %scale_b: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 128 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E5M2, box = [128, 128]> -> tensor<128x128xf8E5M2>
    %tbt = tile.trans %tb : tensor<128x128xf8E5M2> -> tensor<128x128xf8E5M2>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E5M2> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %scale = arith.mulf %scale_a, %scale_b : f32
  %scale_t = tile.splat %scale : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %scale_t : tensor<128x128xf32>
  %out = arith.truncf %scaled : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @gemm_fp8_e4m3_out(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %c: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]},
    %scale_a: f32, %scale_b: f32, %scale_c: f32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 128 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tbt = tile.trans %tb : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %scale_ab = arith.mulf %scale_a, %scale_b : f32
  %scale = arith.divf %scale_ab, %scale_c : f32
  %scale_t = tile.splat %scale : f32 -> tensor<128x128xf32>
  %scaled = arith.mulf %acc, %scale_t : tensor<128x128xf32>
  %out = arith.truncf %scaled : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xf8E4M3FN> -> !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  func.return
}

func.func @gemm_fp8_rowwise(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BM", "BK"], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BN", "BK"], tile.dims = ["N", "K"]},
    %scale_a: !tile.desc<?xf32, box = [128]> {tile.box = ["BM"], tile.dims = ["M"]},
    %scale_b: !tile.desc<?xf32, box = [128]> {tile.box = ["BN"], tile.dims = ["N"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", "BN"], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %bk = arith.constant {tile.size = "BK"} 128 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %bn = arith.constant {tile.size = "BN"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tbt = tile.trans %tb : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %sa = tile.load %scale_a[%m0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %sa_col = tile.expand_dims %sa, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %sa_b = tile.broadcast %sa_col : tensor<128x1xf32> -> tensor<128x128xf32>
  %sb = tile.load %scale_b[%n0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  %sb_row = tile.expand_dims %sb, axis = 0 : tensor<128xf32> -> tensor<1x128xf32>
  %sb_b = tile.broadcast %sb_row : tensor<1x128xf32> -> tensor<128x128xf32>
  %outer = arith.mulf %sa_b, %sb_b : tensor<128x128xf32>
  %scaled = arith.mulf %acc, %outer : tensor<128x128xf32>
  %out = arith.truncf %scaled : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @gemm_fp8_blockwise(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BM", ""], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["N", "K"]},
    %scale_a: !tile.desc<?x?xf32, box = [1, 128]> {tile.box = ["", "BM"], tile.dims = ["KB", "M"]},
    %scale_b: !tile.desc<?x?xf32, box = [1, 4]> {tile.dims = ["NB", "KB"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", ""], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %block = arith.constant 128 : index
  %one = arith.constant 1 : index
  %two = arith.constant 2 : index
  %three = arith.constant 3 : index
  %four = arith.constant 4 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %block : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %block iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %kb = arith.divui %k, %block : index
    %sa = tile.load %scale_a[%kb, %m0] : !tile.desc<?x?xf32, box = [1, 128]> -> tensor<128xf32>
    %kr = arith.remui %kb, %four : index
    %kq = arith.divui %kb, %four : index
    %kb4 = arith.muli %kq, %four : index
    %sb4 = tile.load %scale_b[%pid_n, %kb4] : !tile.desc<?x?xf32, box = [1, 4]> -> tensor<4xf32>
    %tbt = tile.trans %tb : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %part = tile.dot %ta, %tbt, %zero : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    %sb0 = tile.extract %sb4[0] : tensor<4xf32>
    %sb1 = tile.extract %sb4[1] : tensor<4xf32>
    %sb2 = tile.extract %sb4[2] : tensor<4xf32>
    %sb3 = tile.extract %sb4[3] : tensor<4xf32>
    %is1 = arith.cmpi eq, %kr, %one : index
    %is2 = arith.cmpi eq, %kr, %two : index
    %is3 = arith.cmpi eq, %kr, %three : index
    %sb01 = arith.select %is1, %sb1, %sb0 : f32
    %sb012 = arith.select %is2, %sb2, %sb01 : f32
    %sb = arith.select %is3, %sb3, %sb012 : f32
    %sb_t = tile.splat %sb : f32 -> tensor<128xf32>
    %s = arith.mulf %sa, %sb_t : tensor<128xf32>
    %s_col = tile.expand_dims %s, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %s_b = tile.broadcast %s_col : tensor<128x1xf32> -> tensor<128x128xf32>
    %promoted = arith.mulf %part, %s_b : tensor<128x128xf32>
    %next = arith.addf %acc_k, %promoted : tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @gemm_fp8_blockwise_overlap(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.box = ["BM", ""], tile.dims = ["M", "K"]},
    %b: !tile.desc<?x?xf8E4M3FN, box = [128, 128]> {tile.dims = ["N", "K"]},
    %scale_a: !tile.desc<?x?xf32, box = [1, 128]> {tile.box = ["", "BM"], tile.dims = ["KB", "M"]},
    %scale_b: !tile.desc<?x?xf32, box = [1, 4]> {tile.dims = ["NB", "KB"]},
    %c: !tile.desc<?x?xbf16, box = [128, 128]> {tile.box = ["BM", ""], tile.dims = ["M", "N"]}) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xf8E4M3FN, box = [128, 128]>
  %c0 = arith.constant 0 : index
  %block = arith.constant 128 : index
  %pair = arith.constant 256 : index
  %one = arith.constant 1 : index
  %two = arith.constant 2 : index
  %four = arith.constant 4 : index
  %bm = arith.constant {tile.size = "BM"} 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %block : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %pair iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %k1 = arith.addi %k, %block : index
    %ta0 = tile.load %a[%m0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb0 = tile.load %b[%n0, %k] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %ta1 = tile.load %a[%m0, %k1] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %tb1 = tile.load %b[%n0, %k1] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
    %kb = arith.divui %k, %block : index
    %kb1 = arith.addi %kb, %one : index
    %sa0 = tile.load %scale_a[%kb, %m0] : !tile.desc<?x?xf32, box = [1, 128]> -> tensor<128xf32>
    %sa1 = tile.load %scale_a[%kb1, %m0] : !tile.desc<?x?xf32, box = [1, 128]> -> tensor<128xf32>
    %kr = arith.remui %kb, %four : index
    %kq = arith.divui %kb, %four : index
    %kb4 = arith.muli %kq, %four : index
    %sb4 = tile.load %scale_b[%pid_n, %kb4] : !tile.desc<?x?xf32, box = [1, 4]> -> tensor<4xf32>
    %tbt0 = tile.trans %tb0 : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %part0 = tile.dot %ta0, %tbt0, %zero : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    %tbt1 = tile.trans %tb1 : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %part1 = tile.dot %ta1, %tbt1, %zero : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
    %sb0 = tile.extract %sb4[0] : tensor<4xf32>
    %sb1 = tile.extract %sb4[1] : tensor<4xf32>
    %sb2 = tile.extract %sb4[2] : tensor<4xf32>
    %sb3 = tile.extract %sb4[3] : tensor<4xf32>
    %hi = arith.cmpi eq, %kr, %two : index
    %sbe = arith.select %hi, %sb2, %sb0 : f32
    %sbo = arith.select %hi, %sb3, %sb1 : f32
    %sbe_t = tile.splat %sbe : f32 -> tensor<128xf32>
    %sbo_t = tile.splat %sbo : f32 -> tensor<128xf32>
    %s0 = arith.mulf %sa0, %sbe_t : tensor<128xf32>
    %s0_col = tile.expand_dims %s0, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %s0_b = tile.broadcast %s0_col : tensor<128x1xf32> -> tensor<128x128xf32>
    %p0 = arith.mulf %part0, %s0_b : tensor<128x128xf32>
    %acc1 = arith.addf %acc_k, %p0 : tensor<128x128xf32>
    %s1 = arith.mulf %sa1, %sbo_t : tensor<128xf32>
    %s1_col = tile.expand_dims %s1, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %s1_b = tile.broadcast %s1_col : tensor<128x1xf32> -> tensor<128x128xf32>
    %p1 = arith.mulf %part1, %s1_b : tensor<128x128xf32>
    %acc2 = arith.addf %acc1, %p1 : tensor<128x128xf32>
    scf.yield %acc2 : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}
