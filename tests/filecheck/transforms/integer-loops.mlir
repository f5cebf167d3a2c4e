// Loops counted by an i32 (or any signless integer) keep their counter type through
// aref-partition (which rebuilds every loop of both roles) and the two-stage rotation
// (which computes the last iteration's counter).
// RUN: tawa-opt %S/../../kernels/attention_i32.mlir -p aref-partition | filecheck %s --check-prefix=PART
// RUN: tawa-opt %S/../../kernels/attention_i32.mlir -p 'aref-partition,pipeline{two-stage=true}' | filecheck %s --check-prefix=ROT

// PART:      producer {
// PART:        scf.for %{{.*}} = %{{.*}} to %blocks step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (index) : i32 {
// PART:      } consumer {
// PART:        scf.for %{{.*}} = %{{.*}} to %blocks step %{{.*}} iter_args({{.*}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, index) : i32 {

// ROT:       } consumer {
// ROT:         scf.if %has_first
// ROT:           %[[ONE:.*]] = arith.constant 1 : i32
// ROT-NEXT:      %[[SPAN:.*]] = arith.subi %blocks, %{{.*}} : i32
// ROT-NEXT:      %[[TRIPS:.*]] = arith.ceildivsi %[[SPAN]], %{{.*}} : i32
// ROT-NEXT:      arith.subi %[[TRIPS]], %[[ONE]] : i32
// ROT:           %[[LAST:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// ROT-NEXT:      scf.for %{{.*}} = %{{.*}} to %[[LAST]] step %{{.*}} iter_args({{.*}}) -> ({{.*}}) : i32 {
