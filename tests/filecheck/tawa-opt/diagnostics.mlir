// Every user error ends in one diagnostic line and exit code 1, never a traceback.
// RUN: not tawa-opt %s 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not tawa-opt %s -p no-such-pass 2>&1 | filecheck %s --check-prefix=PASS
// RUN: not tawa-opt %s -p 'canonicalize{bogus=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not tawa-opt %examples/gemm.mlir -t 'ptx{bogus=1}' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: not tawa-opt %S/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=FILE
// RUN: sed 's/tile.dot/tile.dott/' %s | not tawa-opt 2>&1 | filecheck %s --check-prefix=PARSE

func.func @k(%a: tensor<128x64xbf16>, %b: tensor<32x128xbf16>, %c: tensor<128x128xf32>) {
  %r = tile.dot %a, %b, %c : tensor<128x64xbf16>, tensor<32x128xbf16> -> tensor<128x128xf32>
  func.return
}

// VERIFY: tawa-opt: {{.*}}diagnostics.mlir:10:3: error: tile.dot contraction mismatch: lhs is 128x64, rhs is 32x128
// VERIFY-NOT: Traceback
// PASS: tawa-opt: unknown pass 'no-such-pass'
// OPTION: tawa-opt: canonicalize{bogus=1}: canonicalize has no option 'bogus' (it takes no options)
// TARGET: tawa-opt: ptx{bogus=1}: ptx has no option 'bogus' (it takes no options)
// FILE: tawa-opt: {{.*}}does-not-exist.mlir: error: No such file or directory
// PARSE: tawa-opt: stdin:10:{{[0-9]+}}: error: Operation tile.dott is not registered
// PARSE-NEXT: %r = tile.dott
// PARSE-NEXT: ^
