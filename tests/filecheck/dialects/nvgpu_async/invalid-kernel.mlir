// RUN: TAWA_VERIFY_DIAG | filecheck %s

// Kernel-wide rules: shared-memory allocations must not overlap and must fit the
// launch's `smem`; the launch's `threads` must run the roles dispatched; the
// `setmaxnreg` budgets must fit the registers the block holds.

func.func @k() {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %b = nvgpu_async.smem_alloc offset = 16384 : !nvgpu_async.smem<2x128x64xbf16>
  func.return
}
// CHECK: invalid-kernel.mlir:9:3: error: nvgpu_async.smem_alloc: %b (bytes 16384 to 49152) overlaps %a (bytes 0 to 32768): TMA copies into one overwrite the tiles of the other

// -----

func.func @k() {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  %full = nvgpu_async.mbarrier_alloc offset = 32760 : !nvgpu_async.mbarrier<2>
  func.return
}
// CHECK: invalid-kernel.mlir:18:3: error: nvgpu_async.mbarrier_alloc: %full (bytes 32760 to 32776) overlaps %a (bytes 0 to 32768): TMA copies into the ring overwrite the barriers

// -----

func.func @k() {
  %a = nvgpu_async.smem_alloc offset = -1024 : !nvgpu_async.smem<2x128x64xbf16>
  func.return
}
// CHECK: error: nvgpu_async.smem_alloc offset -1024 is negative

// -----

func.func @k() attributes {nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 33000, cluster = 1>} {
  %a = nvgpu_async.smem_alloc offset = 0 : !nvgpu_async.smem<2x128x64xbf16>
  func.return
}
// CHECK: invalid-kernel.mlir:34:3: error: nvgpu_async.smem_alloc: %a ends at byte 32768; with 1024 bytes to align the base the kernel needs 33792, past the 33000 bytes of shared memory the launch gives: accesses past the end fault

// -----

func.func @k() attributes {nvgpu_async.launch = #nvgpu_async.launch<threads = 128, smem = 2048, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
  }
  func.return
}
// CHECK: invalid-kernel.mlir:42:3: error: nvgpu_async.role_dispatch: the launch gives 128 threads; a producer and 1 consumer warpgroups are 256: warpgroups that are not launched never arrive on the barriers the others wait on, and the kernel hangs

// -----

func.func @k() attributes {nvgpu_async.launch = #nvgpu_async.launch<threads = 512, smem = 2048, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 2 producer {
  } consumer {
  }
  func.return
}
// CHECK: error: nvgpu_async.role_dispatch: the launch gives 512 threads; a producer and 2 consumer warpgroups are 384: the extra warpgroups run the consumer role on rows no one owns

// -----

func.func @k() attributes {nvgpu_async.launch = #nvgpu_async.launch<threads = 200, smem = 2048, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
  }
  func.return
}
// The launch attribute checks itself where it is written.
// CHECK: invalid-kernel.mlir:[[# @LINE - 7]]:68
// CHECK: nvgpu_async.launch: 200 threads are not whole warpgroups of 128

// -----

func.func @k() attributes {nvgpu_async.launch = {threads = 256 : i64}} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
  }
  func.return
}
// CHECK: error: nvgpu_async.role_dispatch: nvgpu_async.launch needs a #nvgpu_async.launch<threads = .., smem = .., cluster = ..>, got {threads = 256 : i64}

// -----

func.func @k() attributes {nvgpu_async.launch = #nvgpu_async.launch<threads = 256, smem = 300000, cluster = 1>} {
  nvgpu_async.role_dispatch consumers = 1 producer {
  } consumer {
  }
  func.return
}
// CHECK: nvgpu_async.launch: 300000 bytes of shared memory; a block can have 0 to 232448

// -----

// Two consumers raising to 248: more registers than the SM has.
func.func @k() {
  nvgpu_async.role_dispatch consumers = 2 producer {
    nvgpu_async.setmaxnreg dec 24
  } consumer {
    nvgpu_async.setmaxnreg inc 248
  }
  func.return
}
// CHECK: error: nvgpu_async.role_dispatch: after setmaxnreg, budgets 24 + 2 x 248 registers per thread need 66560 registers; an SM has 65536

// -----

// 32 + 2 x 240 fits the SM's 65536, but the block holds 384 x 168 from launch:
// the second consumer's setmaxnreg.inc would wait forever.
func.func @k() {
  nvgpu_async.role_dispatch consumers = 2 producer {
    nvgpu_async.setmaxnreg dec 32
  } consumer {
    nvgpu_async.setmaxnreg inc 240
  }
  func.return
}
// CHECK: error: nvgpu_async.role_dispatch: after setmaxnreg, budgets 32 + 2 x 240 registers per thread need 65536 registers; the block's 384 threads start with 168 each (64512), and a setmaxnreg.inc the block's pool cannot serve waits forever

// -----

// Without a decrease the producer keeps the 168 registers it was launched with.
func.func @k() {
  nvgpu_async.role_dispatch consumers = 2 producer {
  } consumer {
    nvgpu_async.setmaxnreg inc 240
  }
  func.return
}
// CHECK: error: nvgpu_async.role_dispatch: after setmaxnreg, budgets 168 + 2 x 240 registers per thread need 82944 registers; an SM has 65536

// -----

func.func @k() {
  nvgpu_async.role_dispatch consumers = 2 registers = [32, 240] producer {
  } consumer {
  }
  func.return
}
// CHECK: error: nvgpu_async.role_dispatch: budgets 32 + 2 x 240 registers per thread need 65536 registers; the block's 384 threads start with 168 each (64512)

// -----

func.func @k(%i: index) {
  nvgpu_async.role_dispatch consumers = 1 producer {
    %b = nvgpu_async.mbarrier_alloc offset = 0 : !nvgpu_async.mbarrier<1>
    nvgpu_async.setmaxnreg dec 40
  } consumer {
  }
  func.return
}
// CHECK: error: nvgpu_async.setmaxnreg must be the first op of a role_dispatch region: elsewhere not every warp of the warpgroup runs it (the producer's other ops run on one thread), and then it is undefined

// -----

func.func @k() {
  nvgpu_async.setmaxnreg dec 40
  func.return
}
// CHECK: error: nvgpu_async.setmaxnreg must be the first op of a role_dispatch region
