// RUN: TAWA_VERIFY_DIAG | filecheck %s

// Each case breaks one rule of the tile dialect; each message names the problem.

func.func @k(%a: tensor<128x64xbf16>, %b: tensor<32x128xbf16>, %c: tensor<128x128xf32>) {
  %r = tile.dot %a, %b, %c : tensor<128x64xbf16>, tensor<32x128xbf16> -> tensor<128x128xf32>
  func.return
}
// CHECK: error: tile.dot contraction mismatch: lhs is 128x64, rhs is 32x128

// -----

func.func @k(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>, %c: tensor<128x128xf32>) {
  %r = tile.dot %a, %b, %c : tensor<128x64xf32>, tensor<64x128xf32> -> tensor<128x128xf32>
  func.return
}
// CHECK: error: tile.dot inputs must be bf16, f16, f8E4M3FN or f8E5M2, got f32 and f32

// -----

func.func @k(%a: tensor<128x64xi32>, %b: tensor<64x128xi32>, %c: tensor<128x128xf32>) {
  %r = tile.dot %a, %b, %c : tensor<128x64xi32>, tensor<64x128xi32> -> tensor<128x128xf32>
  func.return
}
// CHECK: error: tile.dot inputs must be bf16, f16, f8E4M3FN or f8E5M2, got i32 and i32 (integer tiles have no tensor-core product here)

// -----

func.func @k(%a: tensor<128x64xbf16>, %b: tensor<64x128xf16>, %c: tensor<128x128xf32>) {
  %r = tile.dot %a, %b, %c : tensor<128x64xbf16>, tensor<64x128xf16> -> tensor<128x128xf32>
  func.return
}
// CHECK: error: tile.dot input element types bf16 and f16 do not mix: both bf16, both f16, or both 8-bit floats

// -----

// wgmma never mixes a 16-bit with an 8-bit input

func.func @k(%a: tensor<128x64xf8E4M3FN>, %b: tensor<64x128xbf16>, %c: tensor<128x128xf32>) {
  %r = tile.dot %a, %b, %c : tensor<128x64xf8E4M3FN>, tensor<64x128xbf16> -> tensor<128x128xf32>
  func.return
}
// CHECK: error: tile.dot input element types f8E4M3FN and bf16 do not mix: both bf16, both f16, or both 8-bit floats

// -----

func.func @k(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>, %c: tensor<128x128xbf16>) {
  %r = tile.dot %a, %b, %c : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x128xbf16>
  func.return
}
// CHECK: error: tile.dot accumulates in f32, got accumulator bf16

// -----

func.func @k(%a: tensor<128x64xbf16>, %b: tensor<64x128xbf16>, %c: tensor<128x64xf32>) {
  %r = tile.dot %a, %b, %c : tensor<128x64xbf16>, tensor<64x128xbf16> -> tensor<128x64xf32>
  func.return
}
// CHECK: error: tile.dot accumulator is 128x64, expected 128x128

// -----

func.func @k(%a: tensor<128x64x2xbf16>, %b: tensor<64x128xbf16>, %c: tensor<128x128xf32>) {
  %r = tile.dot %a, %b, %c : tensor<128x64x2xbf16>, tensor<64x128xbf16> -> tensor<128x128xf32>
  func.return
}
// CHECK: error: tile.dot operands must all be rank-2 tiles

// -----

func.func @k(%d: !tile.desc<?x?xbf16, box = [128, 64]>, %i: index) {
  %t = tile.load %d[%i] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
  func.return
}
// CHECK: error: tile.load needs 2 indices for a rank-2 tensor, got 1

// -----

func.func @k(%d: !tile.desc<?x?xbf16, box = [128, 64]>, %i: index) {
  %t = tile.load %d[%i, %i] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<64x64xbf16>
  func.return
}
// CHECK: error: tile.load tile shape 64x64 does not match the box 128x64

// -----

// Q stored [B, S, H, D]: the head's unit axis sits between the rows and the
// columns, and only leading unit axes leave the tile.
func.func @k(%d: !tile.desc<?x?x?x64xbf16, box = [1, 64, 1, 64]>, %i: index) {
  %t = tile.load %d[%i, %i, %i, %i] : !tile.desc<?x?x?x64xbf16, box = [1, 64, 1, 64]> -> tensor<64x64xbf16>
  func.return
}
// CHECK: error: tile.load tile shape 64x64 does not match the box 1x64x1x64 (a tile is the box, or the box without its leading unit dimensions: 64x1x64; other unit dimensions stay)

// -----

func.func @k(%d: !tile.desc<?x?xbf16, box = [128, 64]>, %i: index) {
  %t = tile.load %d[%i, %i] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xf16>
  func.return
}
// CHECK: error: tile.load tile element type f16 does not match the tensor's bf16

// -----

func.func @k(%d: !tile.desc<?x?xbf16, box = [128, 64]>, %t: tensor<128x128xbf16>, %i: index) {
  tile.store %t, %d[%i, %i] : tensor<128x128xbf16> -> !tile.desc<?x?xbf16, box = [128, 64]>
  func.return
}
// CHECK: error: tile.store tile shape 128x128 does not match the box 128x64

// -----

func.func @k(%d: !tile.desc<?x?xbf16, box = [128, 64]>) {
  %x = tile.dim %d, 2 : !tile.desc<?x?xbf16, box = [128, 64]>
  func.return
}
// CHECK: error: tile.dim axis 2 is out of range for a rank-2 tensor

// -----

func.func @k(%x: tensor<128x64x2xbf16>) {
  %t = tile.trans %x : tensor<128x64x2xbf16> -> tensor<2x64x128xbf16>
  func.return
}
// CHECK: error: tile.trans needs a rank-2 tile

// -----

func.func @k(%x: tensor<128x64xbf16>) {
  %t = tile.trans %x : tensor<128x64xbf16> -> tensor<128x64xbf16>
  func.return
}
// CHECK: error: tile.trans of 128x64xbf16 must give 64x128xbf16

// -----

func.func @k(%x: tensor<128x64xf32>) {
  %r = tile.reduce max %x, axis = 2 : tensor<128x64xf32> -> tensor<128xf32>
  func.return
}
// CHECK: error: tile.reduce axis 2 is out of range for a rank-2 tile

// -----

func.func @k(%x: tensor<128x64xf32>) {
  %r = tile.reduce sum %x, axis = 1 : tensor<128x64xf32> -> tensor<64xf32>
  func.return
}
// CHECK: error: tile.reduce along axis 1 of 128x64xf32 gives 128xf32, not 64xf32

// -----

func.func @k(%x: tensor<128x64xi64>) {
  %r = tile.reduce sum %x, axis = 1 : tensor<128x64xi64> -> tensor<128xi64>
  func.return
}
// CHECK: error: tile.reduce needs a float or i32 tile, got i64

// -----

func.func @k(%x: tensor<128xf32>) {
  %r = tile.expand_dims %x, axis = 1 : tensor<128xf32> -> tensor<1x128xf32>
  func.return
}
// CHECK: error: tile.expand_dims at axis 1 must give 128x1xf32

// -----

func.func @k(%x: tensor<128xf32>) {
  %r = tile.expand_dims %x, axis = 3 : tensor<128xf32> -> tensor<1x128xf32>
  func.return
}
// CHECK: error: tile.expand_dims axis 3 is out of range for a rank-1 tile

// -----

func.func @k(%x: tensor<128x2xf32>) {
  %r = tile.broadcast %x : tensor<128x2xf32> -> tensor<128x64xf32>
  func.return
}
// CHECK: error: tile.broadcast cannot broadcast 128x2 to 128x64: ranks must match and only unit dimensions may grow

// -----

func.func @k(%x: tensor<128x1xf32>) {
  %r = tile.broadcast %x : tensor<128x1xf32> -> tensor<128x64xf16>
  func.return
}
// CHECK: error: tile.broadcast cannot change the element type

// -----

func.func @k(%x: f16) {
  %r = tile.splat %x : f16 -> tensor<128x64xf32>
  func.return
}
// CHECK: error: tile.splat of a f16 cannot make a tile of f32

// -----

func.func @k() {
  %r = tile.iota : tensor<128x2xi32>
  func.return
}
// CHECK: error: tile.iota gives a rank-1 integer tile

// -----

func.func @k(%x: tensor<4xf32>) {
  %r = tile.cmpi slt, %x, %x : tensor<4xf32> -> tensor<4xi1>
  func.return
}
// CHECK: error: tile.cmpi compares integer tiles, not f32

// -----

func.func @k(%x: tensor<4xi32>) {
  %r = tile.cmpi slt, %x, %x : tensor<4xi32> -> tensor<8xi1>
  func.return
}
// CHECK: error: tile.cmpi of 4 tiles gives an i1 tile of the same shape

// -----

func.func @k(%x: tensor<4xf8E4M3FN>) {
  %r = tile.cmpf olt, %x, %x : tensor<4xf8E4M3FN> -> tensor<4xi1>
  func.return
}
// CHECK: error: tile.cmpf compares f32, bf16 or f16 tiles (arith.extf an 8-bit tile first), not f8E4M3FN

// -----

func.func @k(%x: tensor<4xf32>) {
  %r = tile.cmpf gt, %x, %x : tensor<4xf32> -> tensor<4xi1>
  func.return
}
// CHECK: invalid.mlir:[[# @LINE - 3]]:18
// CHECK: tile.cmpf has no predicate gt; it takes oeq, ogt, oge, olt, ole, one, ord, ueq, ugt, uge, ult, ule, une, uno

// -----

func.func @k(%x: tensor<4xf32>) {
  %r = tile.cmpf olt, %x, %x : tensor<4xf32> -> tensor<4x1xi1>
  func.return
}
// CHECK: error: tile.cmpf of 4 tiles gives an i1 tile of the same shape

// -----

func.func @k(%x: tensor<4xf32>) {
  %r = tile.fptosi %x : tensor<4xf32> -> tensor<4xi16>
  func.return
}
// CHECK: error: tile.fptosi converts f32 tiles to i32, not f32 to i16

// -----

func.func @k(%x: tensor<4xbf16>) {
  %r = tile.fptoui %x : tensor<4xbf16> -> tensor<4xi32>
  func.return
}
// CHECK: error: tile.fptoui converts f32 tiles to i32, not bf16 to i32

// -----

func.func @k(%x: tensor<4xf32>) {
  %r = tile.fptosi %x : tensor<4xf32> -> tensor<2xi32>
  func.return
}
// CHECK: error: tile.fptosi of a 4 tile gives one of the same shape

// -----

func.func @k(%x: tensor<4xi64>) {
  %r = tile.sitofp %x : tensor<4xi64> -> tensor<4xf32>
  func.return
}
// CHECK: error: tile.sitofp converts i32 tiles to f32, not i64 to f32

// -----

func.func @k(%x: tensor<4xi8>) {
  %r = tile.extsi %x : tensor<4xi8> -> tensor<4xi64>
  func.return
}
// CHECK: error: tile.extsi converts i8 tiles to i32 or i32 tiles to i64, not i8 to i64

// -----

func.func @k(%x: tensor<4xi32>) {
  %r = tile.trunci %x : tensor<4xi32> -> tensor<4xi16>
  func.return
}
// CHECK: error: tile.trunci converts i32 tiles to i8 or i64 tiles to i32, not i32 to i16

// -----

func.func @k(%x: tensor<4x8xi64>) {
  %r = tile.reduce max %x, axis = 1 : tensor<4x8xi64> -> tensor<4xi64>
  func.return
}
// CHECK: error: tile.reduce needs a float or i32 tile, got i64 (tile.extsi or tile.trunci it to i32 first)

// -----

func.func @k(%x: tensor<4xi32>) {
  %r = tile.sitofp %x : tensor<4xi32> -> tensor<8xf32>
  func.return
}
// CHECK: error: tile.sitofp of a 4 tile gives one of the same shape

// -----

func.func @k(%m: tensor<8xi1>, %x: tensor<4xf32>) {
  %r = tile.select %m, %x, %x : tensor<8xi1>, tensor<4xf32>
  func.return
}
// CHECK: error: tile.select needs an i1 mask of shape 4, got 8xi1


// -----

func.func @k(%d: !tile.desc<?x?xbf16, box = [512, 64]>) {
  func.return
}
// CHECK: !tile.desc box dimensions must be in [1, 256], got [512, 64]

// -----

func.func @k(%d: !tile.desc<?x?xbf16, box = [64]>) {
  func.return
}
// CHECK: !tile.desc box has rank 1 but the tensor has rank 2

// -----

func.func @k(%d: !tile.desc<?x?xi16, box = [64, 64]>) {
  func.return
}
// CHECK: !tile.desc element type must be bf16, f16, f32, f8E4M3FN, f8E5M2, i8, i32 or i64, got i16 (integer tensors are signless i8, i32 or i64; widen or narrow others to one of them outside the kernel)

// -----

func.func @k(%d: !tile.desc<?x?xui8, box = [64, 64]>) {
  func.return
}
// CHECK: !tile.desc element type must be bf16, f16, f32, f8E4M3FN, f8E5M2, i8, i32 or i64, got ui8 (integer tensors

// -----

func.func @k(%d: !tile.desc<?xf64, box = [64]>) {
  func.return
}
// CHECK: !tile.desc element type must be bf16, f16, f32, f8E4M3FN, f8E5M2, i8, i32 or i64, got f64{{$}}

// -----

func.func @k(%d: !tile.desc<0x?xf32, box = [64, 64]>) {
  func.return
}
// CHECK: !tile.desc dimensions must be positive or '?', got 0x?


// -----

func.func @k(%t: tensor<4xf32>) {
  %x = tile.extract %t[4] : tensor<4xf32>
  func.return
}
// CHECK: error: tile.extract position [4] is not an element of a 4 tile

// -----

func.func @k(%t: tensor<2x4xf32>) {
  %x = tile.extract %t[1] : tensor<2x4xf32>
  func.return
}
// CHECK: error: tile.extract position [1] is not an element of a 2x4 tile

// -----

func.func @k(%t: tensor<4xf32>) {
  %x = "tile.extract"(%t) <{position = [#builtin.int<0>]}> : (tensor<4xf32>) -> f16
  func.return
}
// CHECK: error: tile.extract of a f32 tile gives f32, not f16
