// An op of no registered dialect (parsed with --allow-unregistered-dialect) is
// refused by the first pass: the pipeline's cleanups dropped it silently.
// RUN: not tawa-opt %s --allow-unregistered-dialect -p tawa-hopper-pipeline 2>&1 | filecheck %s

func.func @k(%c: !tile.desc<?xf32, box = [64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = arith.constant dense<1.0> : tensor<64xf32>
  // CHECK: tawa-opt: {{.*}}unregistered.mlir:[[# @LINE + 1]]:3: error: builtin.unregistered: foo.bar is not an op of a registered dialect: no level compiles it (the cleanups would drop it silently)
  "foo.bar"() : () -> ()
  tile.store %t, %c[%c0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
