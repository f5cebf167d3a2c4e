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
