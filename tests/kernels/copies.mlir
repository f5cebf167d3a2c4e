// A loaded tile stored as it is (found by the outside-user sweep: 'cannot read
// the shared tile %t here'): read from its slot into registers, then stored.
//   @copy:        o = x, 64 x 128 tiles
//   @vector_copy: o = x, a vector
func.func @copy(%x: !tile.desc<?x?xbf16, box = [64, 128]>, %o: !tile.desc<?x?xbf16, box = [64, 128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %m0 = arith.muli %pid, %c64 : index
  %t = tile.load %x[%m0, %c0] : !tile.desc<?x?xbf16, box = [64, 128]> -> tensor<64x128xbf16>
  tile.store %t, %o[%m0, %c0] : tensor<64x128xbf16> -> !tile.desc<?x?xbf16, box = [64, 128]>
  func.return
}

func.func @vector_copy(%x: !tile.desc<?xf32, box = [128]>, %o: !tile.desc<?xf32, box = [128]>) attributes {tile.kernel} {
  %pid = tile.program_id x
  %c128 = arith.constant 128 : index
  %m0 = arith.muli %pid, %c128 : index
  %t = tile.load %x[%m0] : !tile.desc<?xf32, box = [128]> -> tensor<128xf32>
  tile.store %t, %o[%m0] : tensor<128xf32> -> !tile.desc<?xf32, box = [128]>
  func.return
}
