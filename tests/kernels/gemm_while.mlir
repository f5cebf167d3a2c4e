// A GEMM with scf.while and scf.if where only scf.for used to go: both roles count
// the K slabs up to the first multiple of 64 at or past K with a scalar scf.while
// (the producer computes it whole for its loop bound), and the epilogue halves the
// accumulator `%halvings` times in an scf.while and negates it when `%negate` is
// set in an scf.if, both reading constants defined outside them.
// a: M x K, b: N x K (bf16), c: M x N. Grid: (ceil(M / 128), ceil(N / 128)).
func.func @gemm_while(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %c: !tile.desc<?x?xbf16, box = [128, 128]>, %halvings: index, %negate: i32) attributes {tile.kernel} {
  %pid_m = tile.program_id x
  %pid_n = tile.program_id y
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero_i = arith.constant 0 : i32
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %bn = arith.constant 128 : index
  %m0 = arith.muli %pid_m, %bm : index
  %n0 = arith.muli %pid_n, %bn : index
  %k_end = scf.while (%e = %c0) : (index) -> index {
    %short = arith.cmpi slt, %e, %K : index
    scf.condition(%short) %e : index
  } do {
  ^bb0(%f: index):
    %f1 = arith.addi %f, %bk : index
    scf.yield %f1 : index
  }
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %half = arith.constant dense<5.000000e-01> : tensor<128x128xf32>
  %minus = arith.constant dense<-1.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %k_end step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%n0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %n, %scaled = scf.while (%i = %c0, %x = %acc) : (index, tensor<128x128xf32>) -> (index, tensor<128x128xf32>) {
    %more = arith.cmpi slt, %i, %halvings : index
    scf.condition(%more) %i, %x : index, tensor<128x128xf32>
  } do {
  ^bb0(%j: index, %y: tensor<128x128xf32>):
    %j1 = arith.addi %j, %c1 : index
    %y1 = arith.mulf %y, %half : tensor<128x128xf32>
    scf.yield %j1, %y1 : index, tensor<128x128xf32>
  }
  %flip = arith.cmpi ne, %negate, %zero_i : i32
  %signed = scf.if %flip -> (tensor<128x128xf32>) {
    %neg = arith.mulf %scaled, %minus : tensor<128x128xf32>
    scf.yield %neg : tensor<128x128xf32>
  } else {
    scf.yield %scaled : tensor<128x128xf32>
  }
  %out = arith.truncf %signed : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %n0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}
