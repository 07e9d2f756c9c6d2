// meta-carry-buffers: a carried value whose reads (through views) all end
// before its site's store needs one buffer; a store of an argument or a
// constant moves after those reads unless an update writes it in between;
// an activation's store stays where it is.
// RUN: metac-opt %s --meta-carry-buffers --split-input-file | FileCheck %s

// The stashed weight: stored before the load, moved after its last read
// (through a reshape).
// CHECK-LABEL: func.func @stash
// CHECK: %[[W:.*]] = meta.carry_load site 0 {metac.carry_buffers = 1 : i32}
// CHECK: %[[V:.*]] = nn.reshape %[[W]]
// CHECK: nn.relu %[[V]]
// CHECK-NEXT: meta.carry_store %arg0 site 0 {metac.carry_buffers = 1 : i32}
func.func @stash(%arg0: tensor<2x2xf32>) -> tensor<4xf32> {
  meta.carry_store %arg0 site 0 : tensor<2x2xf32>
  %0 = meta.carry_load site 0 : tensor<2x2xf32>
  %1 = nn.reshape %0 : tensor<2x2xf32> -> tensor<4xf32>
  %2 = nn.relu %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// An activation stored after the load's reads: one buffer, not moved.
// CHECK-LABEL: func.func @late_store
// CHECK: meta.carry_load site 3 {metac.carry_buffers = 1 : i32}
// CHECK: nn.relu
// CHECK: meta.carry_store %{{.*}} site 3 {metac.carry_buffers = 1 : i32}
func.func @late_store(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = meta.carry_load site 3 : tensor<4xf32>
  %1 = nn.relu %0 : tensor<4xf32>
  %2 = nn.exp %arg0 : tensor<4xf32>
  meta.carry_store %2 site 3 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// An activation stored before the load is read: two buffers (moving the
// store would keep the activation alive longer), and no mark.
// CHECK-LABEL: func.func @early_store
// CHECK: %[[A:.*]] = nn.exp
// CHECK-NEXT: meta.carry_store %[[A]] site 1 : tensor<4xf32>
// CHECK-NEXT: meta.carry_load site 1 : tensor<4xf32>
func.func @early_store(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.exp %arg0 : tensor<4xf32>
  meta.carry_store %0 site 1 : tensor<4xf32>
  %1 = meta.carry_load site 1 : tensor<4xf32>
  %2 = nn.add %1, %0 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// A site loaded twice keeps two buffers; a stale mark is dropped.
// CHECK-LABEL: func.func @two_loads
// CHECK-NOT: metac.carry_buffers
func.func @two_loads(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = meta.carry_load site 2 {metac.carry_buffers = 1 : i32} : tensor<4xf32>
  %1 = meta.carry_load site 2 : tensor<4xf32>
  %2 = nn.add %0, %1 : tensor<4xf32>
  meta.carry_store %arg0 site 2 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// A loaded value returned by the step is read after the call: two buffers.
// CHECK-LABEL: func.func @returned
// CHECK-NOT: metac.carry_buffers
func.func @returned(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  meta.carry_store %arg0 site 4 : tensor<4xf32>
  %0 = meta.carry_load site 4 : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A constant's store (the first call's flag) moves after the reads.
// CHECK-LABEL: func.func @flag
// CHECK: %[[F:.*]] = meta.carry_load site 5 {metac.carry_buffers = 1 : i32}
// CHECK-NEXT: nn.mul %arg0, %[[F]]
// CHECK-NEXT: meta.carry_store %{{.*}} site 5 {metac.carry_buffers = 1 : i32}
func.func @flag(%arg0: tensor<2xf64>) -> tensor<2xf64> {
  %cst = arith.constant dense<1.0> : tensor<2xf64>
  meta.carry_store %cst site 5 : tensor<2xf64>
  %0 = meta.carry_load site 5 : tensor<2xf64>
  %1 = nn.mul %arg0, %0 : tensor<2xf64>
  return %1 : tensor<2xf64>
}
