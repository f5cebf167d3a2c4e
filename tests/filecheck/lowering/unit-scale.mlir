// Rescaling a loop-carried tile by a broadcast row is skipped, exactly, when
// every factor the warp holds is 1.0 (a vote, then one uniform branch over the
// multiplies): online softmax's O *= alpha. A multiply of a tile that is not
// carried by the loop, such as the final normalisation, is left as it is.
// math.ceil and math.floor round to integral values in f32.
// RUN: tawa-opt %s -p 'tawa-hopper-pipeline{tuned=false mma-depth=2 num-consumers=2}' -t ptx | filecheck %s
// RUN: tawa-opt %examples/attention.mlir -p 'tawa-hopper-pipeline{tuned=false mma-depth=2 num-consumers=2 two-stage=true}' -t ptx | filecheck %s --check-prefix=ATTN

// CHECK-LABEL: .visible .entry rescaled_sum(
// CHECK:         cvt.rpi.f32.f32 [[UP0:%f[0-9]+]], [[M0:%f[0-9]+]];
// CHECK-NEXT:    cvt.rpi.f32.f32 [[UP1:%f[0-9]+]], [[M1:%f[0-9]+]];
// CHECK-NEXT:    cvt.rmi.f32.f32 [[A0:%f[0-9]+]], [[M0]];
// CHECK-NEXT:    cvt.rmi.f32.f32 [[A1:%f[0-9]+]], [[M1]];
// CHECK:         ex2.approx.ftz.f32 [[A1]], [[A1]];
// CHECK-NEXT:    setp.neu.f32 [[MOVED:%p[0-9]+]], [[A0]], 0f3F800000;
// CHECK-NEXT:    setp.neu.or.f32 [[MOVED]], [[A1]], 0f3F800000, [[MOVED]];
// CHECK-NEXT:    vote.sync.any.pred [[MOVED]], [[MOVED]], 0xffffffff;
// CHECK-NEXT:    @![[MOVED]] bra.uni [[SKIP:L_unit_scale_[0-9]+]];
// CHECK-NEXT:    mul.f32 [[ACC:%f[0-9]+]], [[ACC]], [[A0]];
// CHECK-COUNT-63: mul.f32
// CHECK-NEXT:  [[SKIP]]:
// CHECK:         bra L_loop_
// CHECK-NOT:     vote.sync
// CHECK:         mul.f32 [[OUT:%f[0-9]+]], [[OUT]], %f{{[0-9]+}};
// CHECK-NOT:     vote.sync
// CHECK:         ret;
func.func @rescaled_sum(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %m0 = arith.muli %pid, %bm : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %ones = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %acc, %last = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero, %last_k = %ones) -> (tensor<128x128xf32>, tensor<128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %s = tile.dot %ta, %tbt, %zero : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    %m = tile.reduce max %s, axis = 1 : tensor<128x128xf32> -> tensor<128xf32>
    %up = math.ceil %m : tensor<128xf32>
    %down = math.floor %m : tensor<128xf32>
    %gap = arith.subf %down, %up : tensor<128xf32>
    %alpha = math.exp2 %gap : tensor<128xf32>
    %alpha_e = tile.expand_dims %alpha, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
    %alpha_b = tile.broadcast %alpha_e : tensor<128x1xf32> -> tensor<128x128xf32>
    %scaled = arith.mulf %acc_k, %alpha_b : tensor<128x128xf32>
    %next = arith.addf %scaled, %s : tensor<128x128xf32>
    scf.yield %next, %alpha : tensor<128x128xf32>, tensor<128xf32>
  }
  %last_e = tile.expand_dims %last, axis = 1 : tensor<128xf32> -> tensor<128x1xf32>
  %last_b = tile.broadcast %last_e : tensor<128x1xf32> -> tensor<128x128xf32>
  %out_f = arith.mulf %acc, %last_b : tensor<128x128xf32>
  %out = arith.truncf %out_f : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// The attention examples: the rescale of O in the key loop is guarded, the
// normalisation at the end is one division per row and multiplies.
// ATTN-LABEL: .visible .entry attention_d64(
// ATTN:         cvt.rmi.f32.f32
// ATTN:         vote.sync.any.pred [[MOVED:%p[0-9]+]], [[MOVED]], 0xffffffff;
// ATTN-NEXT:    @![[MOVED]] bra.uni [[SKIP:L_unit_scale_[0-9]+]];
// ATTN-NEXT:    mul.f32
// ATTN:       [[SKIP]]:
// ATTN-NEXT:    wgmma.fence.sync.aligned;
// ATTN:         div.rn.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// ATTN-NEXT:    div.rn.f32 %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}};
// ATTN-NOT:     div.rn.f32
// ATTN:         ret;
