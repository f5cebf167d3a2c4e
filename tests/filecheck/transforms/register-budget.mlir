// register-budget{producer=P consumer=C}: setmaxnreg budgets per role.
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative,register-budget' | filecheck %s
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,register-budget{producer=24 consumer=256}' | filecheck %s --check-prefix=ONE
// RUN: tawa-opt %examples/gemm.mlir -p 'aref-partition,register-budget{producer=40 consumer=232},convert-aref-to-nvgpu-async' | filecheck %s --check-prefix=LOWER
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative,register-budget{producer=24 consumer=256}' 2>&1 | filecheck %s --check-prefix=FULL
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,cooperative,register-budget{producer=200}' 2>&1 | filecheck %s --check-prefix=DEFAULT
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,register-budget{producer=44}' 2>&1 | filecheck %s --check-prefix=EIGHT
// RUN: not tawa-opt %examples/gemm.mlir -p 'aref-partition,register-budget{producer=40 consumer=240},cooperative' 2>&1 | filecheck %s --check-prefix=AFTER
// RUN: not tawa-opt %examples/gemm.mlir -p 'register-budget' 2>&1 | filecheck %s --check-prefix=ORDER

// Defaults: 24 for the TMA producer, 240 for each of two consumer warpgroups.
// CHECK-LABEL: func.func @gemm_nt
// CHECK:         aref.warp_specialize consumers = 2 registers = [24, 240] producer {

// One consumer warpgroup may take the whole 256.
// ONE:         aref.warp_specialize consumers = 1 registers = [24, 256] producer {

// The lowering turns the budgets into setmaxnreg; with one consumer the launch
// already allows 232, so only the producer's decrease is emitted.
// LOWER-LABEL: func.func @gemm_nt
// LOWER:         nvgpu_async.role_dispatch consumers = 1 registers = [40, 232] producer {
// LOWER-NEXT:      nvgpu_async.setmaxnreg dec 40
// LOWER-NOT:       setmaxnreg inc
// LOWER-LABEL: func.func @gemm_nn

// FULL: tawa-opt: {{.*}}gemm.mlir:9:1: error: aref.warp_specialize: register-budget: budgets 24 + 2 x 256 registers per thread need 68608 registers; an SM has 65536 (producer=24 given, consumer=256 given)
// A budget not given is named as the default it took.
// DEFAULT: tawa-opt: {{.*}}gemm.mlir:9:1: error: aref.warp_specialize: register-budget: budgets 200 + 2 x 240 registers per thread need 87040 registers; an SM has 65536 (producer=200 given, consumer=240 the default for 2 consumer warpgroups)
// EIGHT: tawa-opt: {{.*}}gemm.mlir:9:1: error: aref.warp_specialize: register-budget: producer register budget 44 must be a multiple of 8 in [24, 256]
// AFTER: error: aref.warp_specialize: cooperative: budgets 40 + 2 x 240 registers per thread need 66560 registers; an SM has 65536; run register-budget after cooperative
// ORDER: tawa-opt: {{.*}}gemm.mlir:9:1: error: func.func: register-budget takes aref IR (made by aref-partition), but kernel @gemm_nt is tile IR: run aref-partition first
