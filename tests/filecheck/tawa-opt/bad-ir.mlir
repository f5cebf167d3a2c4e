// RUN: TAWA_VERIFY_DIAG | filecheck %s

// IR that xDSL's parser and verifier accept or crash on, each refused with one
// diagnostic at the op or the literal (tawa_xdsl/ir_checks.py, LocatingParser).

// A step of 0 loops forever on the GPU, a negative one ~2^31 times (the CPU: never).
func.func @k(%n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : index
  scf.for %i = %c0 to %n step %zero {
  }
  func.return
}
// CHECK: bad-ir.mlir:10:3: error: scf.for: step is 0; a loop step must be positive

// -----

func.func @k(%n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %back = arith.constant -64 : index
  scf.for %i = %c0 to %n step %back {
  }
  func.return
}
// CHECK: bad-ir.mlir:21:3: error: scf.for: step is -64; a loop step must be positive

// -----

// A run-time step must be provably positive; a clamped one is.
func.func @k(%n: index, %s: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  scf.for %i = %c0 to %n step %s {
  }
  func.return
}
// CHECK: bad-ir.mlir:32:3: error: scf.for: %s is not provably positive

// -----

func.func @k(%n: index, %s: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %programs = tile.num_programs x
  %clamped = arith.maxsi %s, %c1 : index
  %step = arith.muli %clamped, %programs : index
  scf.for %i = %c0 to %n step %step {
  }
  func.return
}
// CHECK-LABEL: func.func @k
// CHECK: scf.for %i = %c0 to %n step %step

// -----

// Use before definition: xDSL parses it; later stages would crash.
func.func @k(%n: index) -> index {
  %m = arith.muli %later, %n : index
  %later = arith.constant 64 : index
  func.return %m : index
}
// CHECK: bad-ir.mlir:57:3: error: arith.muli: %later is used before it is defined (at line 58)

// -----

func.func @k(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %inner = arith.addi %i, %later : index
  }
  %later = arith.constant 64 : index
  func.return
}
// CHECK: bad-ir.mlir:69:5: error: arith.addi: %later is used where its definition (at line 71) does not dominate the use

// -----

// Two kernels with one name: reported at the second, naming the first.
func.func @twice() attributes {tile.kernel} {
  func.return
}
func.func @twice() attributes {tile.kernel} {
  func.return
}
// CHECK: bad-ir.mlir:82:1: error: func.func: redefinition of symbol "twice" (first defined at line 79)

// -----

// Float literals that overflow their type are refused where they are written,
// whether Python's float overflows (1e400) or only the narrower type does.
func.func @k() {
  %x = arith.constant 1.0e400 : f32
  func.return
}
// CHECK: float literal 1.0e400 is out of range: it would be infinity

// -----

func.func @k() {
  %x = arith.constant 1.0e39 : bf16
  func.return
}
// CHECK: float literal out of range for bf16

// -----

func.func @k() {
  %x = arith.constant 1.0e39 : f32
  func.return
}
// CHECK: float literal out of range for f32

// -----

func.func @k() {
  %x = arith.constant dense<[1.0, 65520.0]> : tensor<2xf16>
  func.return
}
// CHECK: dense<[1.0, 65520.0]>
// CHECK-NEXT: {{^ *}}^^^^^^^{{$}}
// CHECK-NEXT: float literal out of range for f16

// -----

// The largest finite values and infinities spelled as bits stay accepted.
func.func @k() {
  %max = arith.constant 65504.0 : f16
  %big = arith.constant dense<3.0e38> : tensor<2xbf16>
  %ninf = arith.constant 0xFF800000 : f32
  func.return
}
// CHECK-LABEL: func.func @k
// CHECK: arith.constant 6.550400e+04 : f16
// CHECK: arith.constant 0xff800000 : f32

// -----

// Integer literals out of their type's range (index: 32 bits on the GPU, where
// 2^32 was printed into a 32-bit mov).
func.func @k() {
  %x = arith.constant 300 : i8
  func.return
}
// CHECK: Integer value 300 is out of range for type i8

// -----

func.func @k() {
  %x = arith.constant 99999999999999999999999 : index
  func.return
}
// CHECK: out of range for type si32 {{.*}} (index is 32 bits on the GPU)

// -----

func.func @k() {
  %x = arith.constant 2147483648 : index
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 3]]:23
// CHECK: Integer value 2147483648 is out of range for type si32 which supports values in the range [-2147483648, 2147483648) (index is 32 bits on the GPU)

// -----

func.func @k() {
  %x = arith.constant 300 : i32
  %t = arith.constant true
  %d = arith.constant dense<[1, 300]> : tensor<2xi8>
  func.return
}
// CHECK: dense<[1, 300]> : tensor<2xi8>
// CHECK-NEXT: {{^ *}}^^^{{$}}
// CHECK-NEXT: Integer value 300 is out of range for type i8

// -----

// An operand used with two types is reported where the parser found it.
func.func @k(%n: index) -> index {
  %m = arith.muli %n, %n : i32
  func.return %n : index
}
// CHECK: bad-ir.mlir:[[# @LINE - 3]]:19
// CHECK: operand is used with type i32, but has been previously used or defined with type index

// -----

// A type an op's format refuses (xDSL's arith.sitofp takes scalars): at that op,
// named (it was reported at the next op, unnamed), with its tile form.
func.func @k(%o: !tile.desc<?xf32, box = [64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %i = tile.iota : tensor<64xi32>
  %f = arith.sitofp %i : tensor<64xi32> to tensor<64xf32>
  tile.store %f, %o[%c0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 4]]:3
// CHECK-NEXT: %f = arith.sitofp %i : tensor<64xi32> to tensor<64xf32>
// CHECK-NEXT: ^^^^
// CHECK-NEXT: arith.sitofp: tensor<64xi32> should be of base attribute integer_type; it converts scalars; tile.sitofp converts i32 tiles to f32
// CHECK-NOT: tile.store

// -----

// The same for a float-to-integer cast: its tile form named.
func.func @k(%x: !tile.desc<?xf32, box = [64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : !tile.desc<?xf32, box = [64]> -> tensor<64xf32>
  %i = arith.fptosi %t : tensor<64xf32> to tensor<64xi32>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 3]]:3
// CHECK: arith.fptosi: {{.*}}; it converts scalars; tile.fptosi converts f32 tiles to i32

// -----

// arith's compares and select take scalars here (xDSL parses them on tensors; the
// interpreter raised a TypeError, the lowering spoke of a shared tile); refused
// where they are written, while parsing.
func.func @k(%x: !tile.desc<?x?xf32, box = [64, 64]>, %o: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %pos = arith.cmpf ogt, %t, %z : tensor<64x64xf32>
  %r = arith.select %pos, %t, %z : tensor<64x64xf32>
  tile.store %r, %o[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 5]]:3
// CHECK: arith.cmpf takes scalars here; compare float tiles with tile.cmpf

// -----

// A float compare of tiles feeding tile.select: xDSL gives arith.cmpf an i1
// result, so the select failed to parse, the error at the select, about its type
// ("operand is used with type tensor<64x64xi1>, but ... i1").
func.func @k(%x: !tile.desc<?x?xf32, box = [64, 64]>, %o: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %pos = arith.cmpf ogt, %t, %z : tensor<64x64xf32>
  %r = tile.select %pos, %t, %z : tensor<64x64xi1>, tensor<64x64xf32>
  tile.store %r, %o[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 5]]:3
// CHECK: arith.cmpf takes scalars here; compare float tiles with tile.cmpf
// CHECK-NOT: previously used

// -----

func.func @k(%o: !tile.desc<?xf32, box = [64]>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %i = tile.iota : tensor<64xi32>
  %nt = tile.splat %n : i32 -> tensor<64xi32>
  %in = arith.cmpi slt, %i, %nt : tensor<64xi32>
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %one = arith.constant dense<1.0> : tensor<64xf32>
  %v = arith.select %in, %one, %z : tensor<64xf32>
  tile.store %v, %o[%c0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 7]]:3
// CHECK: arith.cmpi takes scalars here; compare integer tiles with tile.cmpi

// -----

func.func @k(%o: !tile.desc<?xf32, box = [64]>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i32
  %in = arith.cmpi slt, %zero, %n : i32
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %one = arith.constant dense<1.0> : tensor<64xf32>
  %v = arith.select %in, %one, %z : tensor<64xf32>
  tile.store %v, %o[%c0] : tensor<64xf32> -> !tile.desc<?xf32, box = [64]>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 4]]:3
// CHECK: arith.select takes scalars here; select between tiles with tile.select

// -----

// An empty block where a terminator belongs: xDSL checks it in the block, not
// in the op, and said so without a location.
func.func @k(%x: !tile.desc<?x?xf32, box = [64, 64]>) attributes {tile.kernel} {
}
// CHECK: bad-ir.mlir:[[# @LINE - 2]]:1: error: func.func: Operation func.func contains empty block

// -----

func.func @k(%o: !tile.desc<?xf32, box = [64]>) attributes {tile.kernel} {
  "scf.while"() ({
  ^bb0:
  }, {
  ^bb1:
  }) : () -> ()
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 7]]:3: error: scf.while: Operation scf.while contains empty block

// -----

// What scf.if and scf.while regions pass on must have the op's types (xDSL
// checks scf.for's yield only: these were lowered, or crashed the PTX printer).
func.func @k(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>, %f: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %r = scf.if %f -> (tensor<64x64xf32>) {
    scf.yield %t : tensor<64x64xf32>
  } else {
    %z = arith.constant dense<0.0> : tensor<64x32xf32>
    scf.yield %z : tensor<64x32xf32>
  }
  tile.store %r, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 5]]:5: error: scf.yield passes on (tensor<64x32xf32>) where the scf.if's results are (tensor<64x64xf32>)

// -----

func.func @k(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>, %f: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %r = scf.if %f -> (tensor<64x64xf32>) {
    scf.yield %t : tensor<64x64xf32>
  }
  tile.store %r, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 6]]:3: error: scf.if has results but no else region to give them

// -----

func.func @k(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %z = arith.constant 0 : i32
  %r:2 = scf.while (%a = %t, %i = %z) : (tensor<64x64xf32>, i32) -> (tensor<64x64xf32>, i32) {
    %p = arith.cmpi slt, %i, %n : i32
    scf.condition(%p) %a, %i : tensor<64x64xf32>, i32
  } do {
  ^bb0(%b: tensor<64x64xf32>, %j: i32):
    %one = arith.constant 1 : i32
    %j1 = arith.addi %j, %one : i32
    %bf = arith.truncf %b : tensor<64x64xf32> to tensor<64x64xf16>
    scf.yield %bf, %j1 : tensor<64x64xf16>, i32
  }
  tile.store %r#0, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 5]]:5: error: scf.yield passes on (tensor<64x64xf16>, i32) where the before region's arguments are (tensor<64x64xf32>, i32)

// -----

// xDSL's scf.while verifier raises a bare exception for these (an internal
// error "in the verifier").
func.func @k(%x: !tile.desc<?x?xf32, box = [64, 64]>, %y: !tile.desc<?x?xf32, box = [64, 64]>, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : !tile.desc<?x?xf32, box = [64, 64]> -> tensor<64x64xf32>
  %z = arith.constant 0 : i32
  %r:2 = "scf.while"(%t, %z) ({
  ^bb0(%a: tensor<64x64xf32>, %i: i32):
    %p = arith.cmpi slt, %i, %n : i32
    scf.condition(%p) %a, %i : tensor<64x64xf32>, i32
  }, {
  ^bb0(%b: tensor<64x32xf32>, %j: i32):
    %one = arith.constant 1 : i32
    %j1 = arith.addi %j, %one : i32
    %b2 = arith.constant dense<0.0> : tensor<64x64xf32>
    scf.yield %b2, %j1 : tensor<64x64xf32>, i32
  }) : (tensor<64x64xf32>, i32) -> (tensor<64x64xf32>, i32)
  tile.store %r#0, %y[%c0, %c0] : tensor<64x64xf32> -> !tile.desc<?x?xf32, box = [64, 64]>
  func.return
}
// CHECK: bad-ir.mlir:[[# @LINE - 14]]:3: error: scf.while's after region takes (tensor<64x32xf32>, i32) where its results are (tensor<64x64xf32>, i32)
