// The kernel marker is the unit attribute tile.kernel on a func.func; a value
// (an integer, a string, an array) or another carrier is refused at the op.
// RUN: TAWA_VERIFY_DIAG | filecheck %s
// RUN: not tawa-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT

func.func @int(%c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel = 3} {
  func.return
}
// CHECK: kernel-marker.mlir:6:1: error: func.func: tile.kernel = 3 : i64: the kernel marker is a unit attribute (write `attributes {tile.kernel}`), it takes no value
// EXIT: tawa-opt: {{.*}}kernel-marker.mlir:6:1: error: func.func: tile.kernel = 3 : i64

// -----

func.func @string(%c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel = "yes"} {
  func.return
}
// CHECK: kernel-marker.mlir:14:1: error: func.func: tile.kernel = "yes": the kernel marker is a unit attribute

// -----

func.func @array(%c: !tile.desc<?x?xbf16, box = [128, 128]>) attributes {tile.kernel = []} {
  func.return
}
// CHECK: kernel-marker.mlir:21:1: error: func.func: tile.kernel = []: the kernel marker is a unit attribute

// -----

module attributes {tile.kernel} {
}
// CHECK: kernel-marker.mlir:28:1: error: builtin.module: tile.kernel marks a func.func; builtin.module cannot be a kernel
