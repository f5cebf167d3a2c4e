// RUN: TAWA_VERIFY_DIAG | filecheck %s

func.func @k() {
  %r = aref.create : !aref.aref<[tensor<64xf32>], depth = 0>
  func.return
}
// CHECK: !aref.aref depth must be >= 1, got 0

// -----

func.func @k() {
  %r = aref.create : !aref.aref<[f32], depth = 2>
  func.return
}
// CHECK: !aref.aref slots hold tiles (tensors), or one tile ticket (index), not f32

// -----

// A ticket ring carries one index per slot, nothing else.
func.func @k() {
  %r = aref.create : !aref.aref<[index, tensor<64xf32>], depth = 2>
  func.return
}
// CHECK: !aref.aref slots hold tiles (tensors), or one tile ticket (index), not index

// -----

func.func @k() {
  %r = aref.create : !aref.aref<[], depth = 2>
  func.return
}
// CHECK: !aref.aref must carry at least one value per slot

// -----

func.func @k(%t: tensor<64xf16>, %i: index) {
  %r = aref.create : !aref.aref<[tensor<64xf32>], depth = 2>
  aref.warp_specialize consumers = 1 producer {
    aref.put %r[%i], %t : !aref.aref<[tensor<64xf32>], depth = 2>
  } consumer {
  }
  func.return
}
// CHECK: operand is used with type tensor<64xf32>, but has been previously used or defined with type tensor<64xf16>

// -----

func.func @k(%t: tensor<64xf32>, %i: index) {
  %r = aref.create : !aref.aref<[tensor<64xf32>], depth = 2>
  aref.warp_specialize consumers = 1 producer {
  } consumer {
    aref.put %r[%i], %t : !aref.aref<[tensor<64xf32>], depth = 2>
  }
  func.return
}
// CHECK: error: aref.put belongs in the producer region of an aref.warp_specialize, found in the consumer region

// -----

func.func @k(%i: index) {
  %r = aref.create : !aref.aref<[tensor<64xf32>], depth = 2>
  %v = aref.get %r[%i] : !aref.aref<[tensor<64xf32>], depth = 2>
  func.return
}
// CHECK: error: aref.get belongs in the consumer region of an aref.warp_specialize, found in no aref.warp_specialize

// -----

func.func @k(%i: index) {
  %r = aref.create : !aref.aref<[tensor<64xf32>], depth = 2>
  aref.warp_specialize consumers = 1 producer {
    aref.consumed %r[%i] : !aref.aref<[tensor<64xf32>], depth = 2>
  } consumer {
  }
  func.return
}
// CHECK: error: aref.consumed belongs in the consumer region of an aref.warp_specialize, found in the producer region

// -----

func.func @k() {
  aref.warp_specialize consumers = 4 producer {
  } consumer {
  }
  func.return
}
// CHECK: error: aref.warp_specialize: 4 consumer warpgroups; 1 to 3 fit next to a producer

// -----

func.func @k() {
  aref.warp_specialize consumers = 2 registers = [40, 236] producer {
  } consumer {
  }
  func.return
}
// CHECK: error: aref.warp_specialize: consumer register budget 236 must be a multiple of 8 in [24, 256]

// -----

func.func @k() {
  aref.warp_specialize consumers = 2 registers = [56, 240] producer {
  } consumer {
  }
  func.return
}
// CHECK: error: aref.warp_specialize: budgets 56 + 2 x 240 registers per thread need 68608 registers; an SM has 65536

// -----

func.func @k() {
  aref.warp_specialize consumers = 2 registers = [40] producer {
  } consumer {
  }
  func.return
}
// CHECK: expected two register budgets: [producer, consumer]

// -----

func.func @k(%t: tensor<64xf32>, %i: index) {
  %r = aref.create : !aref.aref<[tensor<64xf32>, tensor<64xf32>], depth = 2>
  aref.warp_specialize consumers = 1 producer {
    aref.put %r[%i], %t : !aref.aref<[tensor<64xf32>, tensor<64xf32>], depth = 2>
  } consumer {
  }
  func.return
}
// CHECK: the aref carries 2 values, 1 given

// -----

// One split into roles per kernel: a second one crashed the lowering.
func.func @k() {
  aref.warp_specialize consumers = 1 producer {
  } consumer {
  }
  aref.warp_specialize consumers = 1 producer {
  } consumer {
  }
  func.return
}
// CHECK: invalid.mlir:[[# @LINE - 5]]:3: error: aref.warp_specialize: kernel @k splits into roles already; a kernel has one producer and one set of consumers

// -----

func.func @k(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    aref.warp_specialize consumers = 1 producer {
    } consumer {
    }
  }
  func.return
}
// CHECK: invalid.mlir:[[# @LINE - 6]]:5: error: aref.warp_specialize must be directly in a func.func (a kernel splits into roles once, for its whole body), found in scf.for
