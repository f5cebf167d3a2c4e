// A register tile of 32 rows (a row kernel) is held padded to one 64-row
// accumulator block: its padding warps (2 and 3) read the tile's own rows, row
// (16 w + g) mod 32, so every shared address stays inside the tile (the second
// 128-byte column chunk starts 32 rows, 4096 bytes, on); and they store nothing:
// lanes 64.. of the warpgroup are masked from the staging tile (TMA store) and
// from global memory (stores from registers). It read and wrote past the tile.
// RUN: tawa-opt %s -p tawa-hopper-pipeline -t ptx | filecheck %s --check-prefixes=CHECK,TMA
// RUN: tawa-opt %s -p 'tawa-hopper-pipeline{tma-store=false}' -t ptx | filecheck %s --check-prefixes=CHECK,REG

// CHECK-LABEL: .entry row_exp32(
// CHECK:       mad.lo.u32 [[ROW:%r[0-9]+]], %r{{[0-9]+}}, 16, %r{{[0-9]+}};
// CHECK-NEXT:  rem.u32 [[ROW]], [[ROW]], 32;
// CHECK:       ld.shared.v2.f32 {{{.*}}}, [%r{{[0-9]+}}+4096];
// TMA:         setp.lt.u32 [[HELD:%p[0-9]+]], %r{{[0-9]+}}, 64;
// TMA-NEXT:    @[[HELD]] st.shared.v2.f32
// TMA:         cp.async.bulk.tensor.2d.global.shared::cta
// REG:         setp.lt.u32 [[HELD:%p[0-9]+]], %r{{[0-9]+}}, 64;
// REG:         and.pred %p{{[0-9]+}}, %p{{[0-9]+}}, [[HELD]];
// REG:         st.global
func.func @row_exp32(%x: !tile.desc<?x?xf32, box = [32, 64]>,
    %o: !tile.desc<?x?xf32, box = [32, 64]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %m0 = arith.muli %pid, %c32 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [32, 64]> -> tensor<32x64xf32>
  %e = math.exp %t : tensor<32x64xf32>
  tile.store %e, %o[%m0, %c0] : tensor<32x64xf32> -> !tile.desc<?x?xf32, box = [32, 64]>
  func.return
}

// A tile of 24 rows ends in half a warp slab: warp 1's lanes hold row 16 + g
// of it and padding at 24 + g. Each row a thread holds is wrapped on its own,
// (16 w + g + 8 h) mod 24, its own address (8 rows on from the first would
// leave the tile), and each is masked on its own: h = 0 in lanes under 64
// (warps 0 and 1), h = 1 under 32 (warp 0).
// CHECK-LABEL: .entry row_exp24(
// CHECK:       add.u32 [[R1:%r[0-9]+]], %r{{[0-9]+}}, 8;
// CHECK-NEXT:  rem.u32 [[R0:%r[0-9]+]], [[R0]], 24;
// CHECK-NEXT:  rem.u32 [[R1]], [[R1]], 24;
// CHECK:       ld.shared.v2.f32 {{{.*}}}, [%r{{[0-9]+}}+3072];
// TMA:         setp.lt.u32 [[H0:%p[0-9]+]], %r{{[0-9]+}}, 64;
// TMA-NEXT:    setp.lt.u32 [[H1:%p[0-9]+]], %r{{[0-9]+}}, 32;
// TMA-NEXT:    @[[H0]] st.shared.v2.f32
// TMA-NEXT:    @[[H1]] st.shared.v2.f32
// REG:         setp.lt.u32 [[H0:%p[0-9]+]], %r{{[0-9]+}}, 64;
// REG-NEXT:    setp.lt.u32 [[H1:%p[0-9]+]], %r{{[0-9]+}}, 32;
// REG:         and.pred %p{{[0-9]+}}, %p{{[0-9]+}}, [[H0]];
// REG-NEXT:    and.pred %p{{[0-9]+}}, %p{{[0-9]+}}, [[H1]];
// REG:         st.global
func.func @row_exp24(%x: !tile.desc<?x?xf32, box = [24, 64]>,
    %o: !tile.desc<?x?xf32, box = [24, 64]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c24 = arith.constant 24 : index
  %m0 = arith.muli %pid, %c24 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [24, 64]> -> tensor<24x64xf32>
  %e = math.exp %t : tensor<24x64xf32>
  tile.store %e, %o[%m0, %c0] : tensor<24x64xf32> -> !tile.desc<?x?xf32, box = [24, 64]>
  func.return
}

// A column reduction of a 24-row tile: before the thread combines its rows,
// the padding rows' elements become the max's identity (-inf), under the same
// row-by-row masks as the stores: h = 0 (elements 0, 1 of each 8-column
// group) in lanes under 64, h = 1 (elements 2, 3) under 32.
// CHECK-LABEL: .entry column_max24(
// CHECK:       setp.lt.u32 [[H0:%p[0-9]+]], %r{{[0-9]+}}, 64;
// CHECK-NEXT:  setp.lt.u32 [[H1:%p[0-9]+]], %r{{[0-9]+}}, 32;
// CHECK-NEXT:  selp.f32 [[A:%f[0-9]+]], [[A]], 0fFF800000, [[H0]];
// CHECK-NEXT:  selp.f32 [[B:%f[0-9]+]], [[B]], 0fFF800000, [[H0]];
// CHECK-NEXT:  selp.f32 [[C:%f[0-9]+]], [[C]], 0fFF800000, [[H1]];
// CHECK-NEXT:  selp.f32 [[D:%f[0-9]+]], [[D]], 0fFF800000, [[H1]];
// CHECK:       max.NaN.f32
// CHECK:       shfl.sync.bfly.b32
func.func @column_max24(%x: !tile.desc<?x?xf32, box = [24, 32]>,
    %o: !tile.desc<?x?xf32, box = [1, 32]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c24 = arith.constant 24 : index
  %m0 = arith.muli %pid, %c24 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xf32, box = [24, 32]> -> tensor<24x32xf32>
  %m = tile.reduce max %t, axis = 0 : tensor<24x32xf32> -> tensor<32xf32>
  tile.store %m, %o[%pid, %c0] : tensor<32xf32> -> !tile.desc<?x?xf32, box = [1, 32]>
  func.return
}
