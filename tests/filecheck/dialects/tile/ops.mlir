// RUN: tawa-opt %s --split-input-file | filecheck %s
// RUN: TAWA_ROUNDTRIP

// Every tile op in its custom syntax; the second RUN line goes through the
// generic form and back.

// CHECK-LABEL: func.func @grid_and_dims
// CHECK-SAME:    (%d: !tile.desc<?x64xf16, box = [128, 64]>)
// CHECK-SAME:    attributes {tile.kernel}
// CHECK-NEXT:    %{{.*}} = tile.program_id x
// CHECK-NEXT:    %{{.*}} = tile.program_id z
// CHECK-NEXT:    %{{.*}} = tile.num_programs y
// CHECK-NEXT:    %{{.*}} = tile.dim %d, 1 : !tile.desc<?x64xf16, box = [128, 64]>
// CHECK-NEXT:    %{{.*}} = tile.cluster_id
// CHECK-NEXT:    %{{.*}} = tile.cluster_rank
// CHECK-NEXT:    %{{.*}} = tile.next_tile %2
func.func @grid_and_dims(%d: !tile.desc<?x64xf16, box = [128, 64]>) attributes {tile.kernel} {
  %0 = tile.program_id x
  %1 = tile.program_id z
  %2 = tile.num_programs y
  %3 = tile.dim %d, 1 : !tile.desc<?x64xf16, box = [128, 64]>
  %4 = tile.cluster_id
  %5 = tile.cluster_rank
  %6 = tile.next_tile %2
  func.return
}

// -----

// CHECK-LABEL: func.func @load_store
// CHECK:         %[[T:.*]] = tile.load %a[%i, %j] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
// CHECK-NEXT:    %[[H:.*]] = tile.load %q[%i, %j, %i] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
// CHECK-NEXT:    %[[F:.*]] = tile.load %q[%i, %j, %i] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<1x128x64xbf16>
// CHECK-NEXT:    tile.store %[[T]], %a[%j, %i] : tensor<128x64xbf16> -> !tile.desc<?x?xbf16, box = [128, 64]>
func.func @load_store(%a: !tile.desc<?x?xbf16, box = [128, 64]>,
                      %q: !tile.desc<?x?x64xbf16, box = [1, 128, 64]>, %i: index, %j: index) {
  %t = tile.load %a[%i, %j] : !tile.desc<?x?xbf16, box = [128, 64]> -> tensor<128x64xbf16>
  %h = tile.load %q[%i, %j, %i] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<128x64xbf16>
  %f = tile.load %q[%i, %j, %i] : !tile.desc<?x?x64xbf16, box = [1, 128, 64]> -> tensor<1x128x64xbf16>
  tile.store %t, %a[%j, %i] : tensor<128x64xbf16> -> !tile.desc<?x?xbf16, box = [128, 64]>
  func.return
}

// -----

// CHECK-LABEL: func.func @math
// CHECK:      %[[BT:.*]] = tile.trans %b : tensor<128x64xf16> -> tensor<64x128xf16>
// CHECK-NEXT: %{{.*}} = tile.dot %a, %[[BT]], %acc : tensor<64x64xf16>, tensor<64x128xf16> -> tensor<64x128xf32>
// CHECK-NEXT: %[[R:.*]] = tile.reduce max %acc, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
// CHECK-NEXT: %{{.*}} = tile.reduce sum %acc, axis = 0 : tensor<64x128xf32> -> tensor<128xf32>
// CHECK-NEXT: %{{.*}} = tile.reduce min %acc, axis = 0 : tensor<64x128xf32> -> tensor<128xf32>
// CHECK-NEXT: %[[E:.*]] = tile.expand_dims %[[R]], axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
// CHECK-NEXT: %{{.*}} = tile.broadcast %[[E]] : tensor<64x1xf32> -> tensor<64x128xf32>
// CHECK-NEXT: %{{.*}} = tile.splat %s : f32 -> tensor<64x128xf32>
// CHECK-NEXT: %[[I:.*]] = tile.iota : tensor<128xi32>
// CHECK-NEXT: %[[M:.*]] = tile.cmpi sle, %[[I]], %[[I]] : tensor<128xi32> -> tensor<128xi1>
// CHECK-NEXT: %{{.*}} = tile.select %[[M]], %{{.*}}, %{{.*}} : tensor<128xi1>, tensor<128xf32>
// CHECK-NEXT: %[[F:.*]] = tile.sitofp %[[I]] : tensor<128xi32> -> tensor<128xf32>
// CHECK-NEXT: %{{.*}} = tile.cmpf uno, %[[F]], %{{.*}} : tensor<128xf32> -> tensor<128xi1>
// CHECK-NEXT: %{{.*}} = tile.fptosi %[[F]] : tensor<128xf32> -> tensor<128xi32>
// CHECK-NEXT: %{{.*}} = tile.fptoui %[[F]] : tensor<128xf32> -> tensor<128xi32>
// CHECK-NEXT: %[[W:.*]] = tile.extsi %[[I]] : tensor<128xi32> -> tensor<128xi64>
// CHECK-NEXT: %{{.*}} = tile.trunci %[[W]] : tensor<128xi64> -> tensor<128xi32>
// CHECK-NEXT: %[[B:.*]] = tile.trunci %[[I]] : tensor<128xi32> -> tensor<128xi8>
// CHECK-NEXT: %{{.*}} = tile.extsi %[[B]] : tensor<128xi8> -> tensor<128xi32>
func.func @math(%a: tensor<64x64xf16>, %b: tensor<128x64xf16>, %acc: tensor<64x128xf32>, %s: f32) {
  %bt = tile.trans %b : tensor<128x64xf16> -> tensor<64x128xf16>
  %d = tile.dot %a, %bt, %acc : tensor<64x64xf16>, tensor<64x128xf16> -> tensor<64x128xf32>
  %r = tile.reduce max %acc, axis = 1 : tensor<64x128xf32> -> tensor<64xf32>
  %c = tile.reduce sum %acc, axis = 0 : tensor<64x128xf32> -> tensor<128xf32>
  %n = tile.reduce min %acc, axis = 0 : tensor<64x128xf32> -> tensor<128xf32>
  %e = tile.expand_dims %r, axis = 1 : tensor<64xf32> -> tensor<64x1xf32>
  %bc = tile.broadcast %e : tensor<64x1xf32> -> tensor<64x128xf32>
  %sp = tile.splat %s : f32 -> tensor<64x128xf32>
  %i = tile.iota : tensor<128xi32>
  %m = tile.cmpi sle, %i, %i : tensor<128xi32> -> tensor<128xi1>
  %sel = tile.select %m, %c, %n : tensor<128xi1>, tensor<128xf32>
  %f = tile.sitofp %i : tensor<128xi32> -> tensor<128xf32>
  %nan = tile.cmpf uno, %f, %c : tensor<128xf32> -> tensor<128xi1>
  %fi = tile.fptosi %f : tensor<128xf32> -> tensor<128xi32>
  %fu = tile.fptoui %f : tensor<128xf32> -> tensor<128xi32>
  %wide = tile.extsi %i : tensor<128xi32> -> tensor<128xi64>
  %low = tile.trunci %wide : tensor<128xi64> -> tensor<128xi32>
  %byte = tile.trunci %i : tensor<128xi32> -> tensor<128xi8>
  %back = tile.extsi %byte : tensor<128xi8> -> tensor<128xi32>
  func.return
}

// -----

// 8-bit floats: descriptors of one-byte elements (a 128-element box row is 128
// bytes), mixed e4m3 / e5m2 dots, saturating casts, and a scalar taken out of a
// loaded tile.
// CHECK-LABEL: func.func @fp8
// CHECK-SAME:    (%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]>, %b: !tile.desc<?x?xf8E5M2, box = [64, 128]>, %s: !tile.desc<?x?xf32, box = [1, 4]>, %i: index)
// CHECK:         %{{.*}} = tile.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x128xf8E4M3FN>, tensor<128x64xf8E5M2> -> tensor<128x64xf32>
// CHECK-NEXT:    %{{.*}} = arith.truncf %{{.*}} : tensor<128x64xf32> to tensor<128x64xf8E4M3FN>
// CHECK-NEXT:    %{{.*}} = arith.extf %{{.*}} : tensor<128x64xf8E4M3FN> to tensor<128x64xbf16>
// CHECK:         %{{.*}} = tile.extract %{{.*}}[0] {note} : tensor<4xf32>
// CHECK-NEXT:    %{{.*}} = tile.extract %{{.*}}[127, 63] : tensor<128x64xf32>
func.func @fp8(%a: !tile.desc<?x?xf8E4M3FN, box = [128, 128]>, %b: !tile.desc<?x?xf8E5M2, box = [64, 128]>,
               %s: !tile.desc<?x?xf32, box = [1, 4]>, %i: index) {
  %ta = tile.load %a[%i, %i] : !tile.desc<?x?xf8E4M3FN, box = [128, 128]> -> tensor<128x128xf8E4M3FN>
  %tb = tile.load %b[%i, %i] : !tile.desc<?x?xf8E5M2, box = [64, 128]> -> tensor<64x128xf8E5M2>
  %tbt = tile.trans %tb : tensor<64x128xf8E5M2> -> tensor<128x64xf8E5M2>
  %z = arith.constant dense<0.0> : tensor<128x64xf32>
  %d = tile.dot %ta, %tbt, %z : tensor<128x128xf8E4M3FN>, tensor<128x64xf8E5M2> -> tensor<128x64xf32>
  %q = arith.truncf %d : tensor<128x64xf32> to tensor<128x64xf8E4M3FN>
  %h = arith.extf %q : tensor<128x64xf8E4M3FN> to tensor<128x64xbf16>
  %ts = tile.load %s[%i, %i] : !tile.desc<?x?xf32, box = [1, 4]> -> tensor<4xf32>
  %x = tile.extract %ts[0] {note} : tensor<4xf32>
  %y = tile.extract %d[127, 63] : tensor<128x64xf32>
  func.return
}
