// Stores whose coordinates may be negative (before the start of the tensor) go
// from registers with unsigned bounds checks, since a TMA store below 0 faults
// the H100; loads below 0 keep TMA (zeros), and so do stores at coordinates
// that cannot be negative, among them a reversed program id. A TMA store also
// faults off a 16-byte boundary in the row, so a column that is not provably a
// multiple of 8 (bf16) stores from registers too.
// RUN: tawa-opt %s -p 'tawa-hopper-pipeline{tuned=false mma-depth=2 num-consumers=2}' -t ptx | filecheck %s

func.func @load_before_start(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %load_shift = arith.constant 64 : index
  %store_shift = arith.constant 0 : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %m0 = arith.muli %pid, %bm : index
  %src = arith.subi %m0, %load_shift : index
  %dst = arith.subi %m0, %store_shift : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%src, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%dst, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @store_before_start(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %load_shift = arith.constant 0 : index
  %store_shift = arith.constant 64 : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %m0 = arith.muli %pid, %bm : index
  %src = arith.subi %m0, %load_shift : index
  %dst = arith.subi %m0, %store_shift : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%src, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%dst, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @reversed_ids(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel} {
  %raw = tile.program_id x
  %count = tile.num_programs x
  %one = arith.constant 1 : index
  %last = arith.subi %count, %one : index
  %pid = arith.subi %last, %raw : index
  %c0 = arith.constant 0 : index
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %load_shift = arith.constant 0 : index
  %store_shift = arith.constant 0 : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %m0 = arith.muli %pid, %bm : index
  %src = arith.subi %m0, %load_shift : index
  %dst = arith.subi %m0, %store_shift : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%src, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%dst, %c0] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

func.func @store_off_16_bytes(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
    %b: !tile.desc<?x?xbf16, box = [128, 64]>,
    %c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %bk = arith.constant 64 : index
  %bm = arith.constant 128 : index
  %K = tile.dim %a, 1 : !tile.desc<?x?xbf16, box = [128, 64]>
  %m0 = arith.muli %pid, %bm : index
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %K step %bk iter_args(%acc_k = %zero) -> (tensor<128x128xf32>) {
    %ta = tile.load %a[%m0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tb = tile.load %b[%c0, %k] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
    %tbt = tile.trans %tb : tensor<128x64xbf16> -> tensor<64x128xbf16>
    %next = tile.dot %ta, %tbt, %acc_k : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  %out = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %out, %c[%m0, %c2] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 128]>
  func.return
}

// CHECK-LABEL: .visible .entry load_before_start(
// CHECK:         cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK-LABEL: .visible .entry store_before_start(
// CHECK-NOT:     bulk_group
// Uniform branches on the tile's first column pick the path: 16-byte vectors
// when it, the row pitch and the base (in elements) are multiples of 8, the
// column is not negative and the whole tile is inside; otherwise pairs, or
// single elements when any of them is odd. Every path checks rows and columns
// unsigned, so negative coordinates are outside.
// CHECK:         or.b32 [[BITS:%r[0-9]+]], [[COL:%r[0-9]+]], [[PITCH:%r[0-9]+]];
// CHECK-NEXT:    cvt.u32.u64 [[BASE:%r[0-9]+]], %rd{{[0-9]+}};
// CHECK-NEXT:    shr.u32 [[BASE]], [[BASE]], 1;
// CHECK-NEXT:    or.b32 [[BITS]], [[BITS]], [[BASE]];
// CHECK-NEXT:    and.b32 [[LOW:%r[0-9]+]], [[BITS]], 1;
// CHECK-NEXT:    setp.ne.u32 [[ODD:%p[0-9]+]], [[LOW]], 0;
// CHECK-NEXT:    and.b32 %r{{[0-9]+}}, [[BITS]], 7;
// CHECK-NEXT:    setp.eq.u32 [[FITS:%p[0-9]+]],
// CHECK-NEXT:    setp.ge.and.s32 [[FITS]], [[COL]], 0, [[FITS]];
// CHECK-NEXT:    sub.s32 [[LAST:%r[0-9]+]], %r{{[0-9]+}}, 128;
// CHECK-NEXT:    setp.le.and.s32 [[FITS]], [[COL]], [[LAST]], [[FITS]];
// (The singles-or-pairs choice is a branch nested in the first one's else.)
// CHECK-NEXT:    @![[FITS]] bra.uni [[NOT_FITS:L_[a-z_]+_[0-9]+]];
// CHECK:         setp.lt.u32 [[ROW:%p[0-9]+]],
// CHECK:         shfl.sync.bfly.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, 2, 31, -1;
// CHECK:         shfl.sync.bfly.b32 %r{{[0-9]+}}, %r{{[0-9]+}}, 1, 31, -1;
// CHECK:         @[[ROW]] st.global.v4.b32 [%rd{{[0-9]+}}{{(\+0)?}}], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}};
// CHECK:         @[[ROW]] st.global.v4.b32 [%rd{{[0-9]+}}+192],
// CHECK:         bra.uni [[DONE:L_[a-z_]+_[0-9]+]];
// CHECK-NEXT:  [[NOT_FITS]]:
// CHECK-NEXT:    @!%p{{[0-9]+}} bra.uni [[PAIRS:L_[a-z_]+_[0-9]+]];
// CHECK:         cvt.s64.s32
// CHECK:         st.global.b16 [%rd{{[0-9]+}}+2],
// CHECK:         bra.uni [[STORED:L_[a-z_]+_[0-9]+]];
// CHECK-NEXT:  [[PAIRS]]:
// CHECK:         setp.lt.u32 %p{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK:         st.global.b32
// CHECK:       [[STORED]]:
// CHECK-NEXT:  [[DONE]]:
// CHECK-LABEL: .visible .entry reversed_ids(
// CHECK:         cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK-LABEL: .visible .entry store_off_16_bytes(
// CHECK-NOT:     bulk_group
// CHECK:         st.global.v4.b32
