// i8 and i64 tiles at the thread level (-t ptx; the kernels of
// tests/kernels/int_tensors.mlir): an i8 element is its value sign-extended in a
// 32-bit register, loaded from its TMA box a byte at a time (ld.shared.s8), stored
// as its low byte (st.u8: into the staging tile of a TMA store, or from registers
// one element at a time at an odd column, and the first of a pair alone at the
// edge), a pair of them from registers as one st.u16 (prmt.b32 puts the second
// byte above the first), narrowed by tile.trunci with cvt.s32.s8 and widened by
// tile.extsi with no instruction; an i64 is one 64-bit register, its pairs moved by
// ld / st .v2.b64, converted by cvt.s64.s32 (tile.extsi) and cvt.u32.u64
// (tile.trunci).
// RUN: tawa-opt %S/../../kernels/int_tensors.mlir -p tawa-hopper-pipeline -t ptx | filecheck %s

// CHECK-LABEL: .visible .entry accuracy_i8(
// CHECK:         ld.shared.s8 %r{{[0-9]+}}, [%r{{[0-9]+}}];
// CHECK:         setp.eq.s32
// CHECK:         cvt.s64.s32 %rd{{[0-9]+}}, %r{{[0-9]+}};
// CHECK:         st.global.b64 [%rd{{[0-9]+}}], %rd{{[0-9]+}};

// CHECK-LABEL: .visible .entry mix_i8_i64(
// CHECK:         ld.shared.s8 %r{{[0-9]+}}, [%r{{[0-9]+}}+1];
// CHECK:         ld.shared.v2.b64 {%rd{{[0-9]+}}, %rd{{[0-9]+}}}, [%r{{[0-9]+}}{{.*}}];
// CHECK:         cvt.u32.u64 %r{{[0-9]+}}, %rd{{[0-9]+}};
// CHECK:         cvt.s32.s8 %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK:         st.global.u8 [%rd{{[0-9]+}}+1], %r{{[0-9]+}};
// CHECK:         prmt.b32 [[PAIR:%r[0-9]+]], [[FIRST:%r[0-9]+]], %r{{[0-9]+}}, 64;
// CHECK:         @%p{{[0-9]+}} st.global.u16 [%rd{{[0-9]+}}], [[PAIR]];
// CHECK:         @%p{{[0-9]+}} st.global.u8 [%rd{{[0-9]+}}], [[FIRST]];
// CHECK:         cvt.s64.s32 %rd{{[0-9]+}}, %r{{[0-9]+}};
// CHECK:         st.shared.v2.b64 [%r{{[0-9]+}}{{.*}}], {%rd{{[0-9]+}}, %rd{{[0-9]+}}};
// CHECK:         cp.async.bulk.tensor.2d.global.shared::cta.bulk_group

// CHECK-LABEL: .visible .entry affine_i8(
// CHECK:         ld.shared.s8 %r{{[0-9]+}}, [%r{{[0-9]+}}{{.*}}];
// CHECK-NOT:     cvt.s32.s8
// CHECK:         mul.lo.s32
// CHECK:         cvt.s32.s8 %r{{[0-9]+}}, %r{{[0-9]+}};
// CHECK:         st.shared.u8 [%r{{[0-9]+}}{{.*}}], %r{{[0-9]+}};
// CHECK:         cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
