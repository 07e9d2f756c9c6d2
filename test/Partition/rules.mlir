// Sharding rules of the partitioner on small functions, one per rule.
// RUN: metac-opt %s --meta-partition --split-input-file | FileCheck %s

shard.grid @mesh(shape = 2x4x1x1)

// A contraction over a split dimension is partial; linear ops keep it
// partial; a nonlinear use sums it first.
// CHECK-LABEL: func.func @contraction(
// CHECK-SAME: %[[A:.*]]: tensor<3x2x5xf32>, %[[B:.*]]: tensor<3x2x7xf32>) -> tensor<3x5x7xf32>
func.func @contraction(%a: tensor<3x8x5xf32>, %b: tensor<3x8x7xf32>) -> tensor<3x5x7xf32> {
  %s = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %a1 = shard.shard %a to %s : tensor<3x8x5xf32>
  %b1 = shard.shard %b to %s : tensor<3x8x7xf32>
  // CHECK: %[[P:.*]] = nn.matmul %[[A]], %[[B]] {transpose_lhs} : tensor<3x2x5xf32>, tensor<3x2x7xf32> -> tensor<3x5x7xf32>
  %p = nn.matmul %a1, %b1 {transpose_lhs} : tensor<3x8x5xf32>, tensor<3x8x7xf32> -> tensor<3x5x7xf32>
  // CHECK-NEXT: %[[Q:.*]] = nn.scale %[[P]] by 2.0
  %q = nn.scale %p by 2.0 : tensor<3x5x7xf32>
  // CHECK-NEXT: %[[R:.*]] = shard.all_reduce %[[Q]] on @mesh grid_axes = [1] : tensor<3x5x7xf32> -> tensor<3x5x7xf32>
  // CHECK-NEXT: nn.tanh %[[R]]
  %t = nn.tanh %q : tensor<3x5x7xf32>
  return %t : tensor<3x5x7xf32>
}

// -----

shard.grid @mesh(shape = 2x4x1x1)

// Means over split dimensions are local means scaled by local/global.
// CHECK-LABEL: func.func @means(
func.func @means(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<f32>, tensor<f32>) {
  %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<4x8xf32>
  %y1 = shard.shard %y to %s : tensor<4x8xf32>
  // CHECK: %[[M:.*]] = nn.reduce_mean %{{.*}} dims [0, 1] : tensor<2x2xf32> -> tensor<f32>
  // CHECK-NEXT: %[[MS:.*]] = nn.scale %[[M]] by 1.250000e-01
  %m = nn.reduce_mean %x1 dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
  // CHECK: %[[L:.*]] = nn.mse_loss %{{.*}}, %{{.*}} : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<f32>
  // CHECK-NEXT: %[[LS:.*]] = nn.scale %[[L]] by 1.250000e-01
  %l = nn.mse_loss %x1, %y1 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<f32>
  // CHECK-DAG: shard.all_reduce %[[MS]] on @mesh grid_axes = [0, 1]
  // CHECK-DAG: shard.all_reduce %[[LS]] on @mesh grid_axes = [0, 1]
  return %m, %l : tensor<f32>, tensor<f32>
}

// -----

shard.grid @mesh(shape = 2x4x1x1)

// A reshape keeps a split dimension that leads a merge (8 x 6 into 48:
// each rank's 2 rows are 12 contiguous elements); softmax over a split
// axis gathers it; an op without a rule (conv2d) runs on gathered operands.
// CHECK-LABEL: func.func @gathers(
func.func @gathers(%x: tensor<4x8x6xf32>, %w: tensor<3x6x1x1xf32>) -> (tensor<4x48xf32>, tensor<4x8x6xf32>, tensor<4x8x3x1x1xf32>) {
  %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<4x8x6xf32>
  // CHECK: nn.reshape %{{.*}} : tensor<2x2x6xf32> -> tensor<2x12xf32>
  %r = nn.reshape %x1 : tensor<4x8x6xf32> -> tensor<4x48xf32>
  // CHECK: %[[G1:.*]] = shard.all_gather %{{.*}} on @mesh grid_axes = [1] gather_axis = 1 : tensor<2x2x6xf32> -> tensor<2x8x6xf32>
  // CHECK-NEXT: nn.softmax %[[G1]] axis 1 : tensor<2x8x6xf32>
  %sm = nn.softmax %x1 axis 1 : tensor<4x8x6xf32>
  %x4 = nn.reshape %x1 : tensor<4x8x6xf32> -> tensor<4x8x6x1x1xf32>
  // CHECK: nn.reshape %{{.*}} : tensor<2x2x6xf32> -> tensor<2x2x6x1x1xf32>
  // CHECK: %[[G0:.*]] = shard.all_gather %{{.*}} on @mesh grid_axes = [0] gather_axis = 0 : tensor<2x2x6x1x1xf32> -> tensor<4x2x6x1x1xf32>
  // CHECK-NEXT: %[[G01:.*]] = shard.all_gather %[[G0]] on @mesh grid_axes = [1] gather_axis = 1 : tensor<4x2x6x1x1xf32> -> tensor<4x8x6x1x1xf32>
  // CHECK-NEXT: nn.conv2d %[[G01]], %{{.*}} : tensor<4x8x6x1x1xf32>, tensor<3x6x1x1xf32> -> tensor<4x8x3x1x1xf32>
  %c = nn.conv2d %x4, %w stride [1, 1] padding [0, 0] : tensor<4x8x6x1x1xf32>, tensor<3x6x1x1xf32> -> tensor<4x8x3x1x1xf32>
  return %r, %sm, %c : tensor<4x48xf32>, tensor<4x8x6xf32>, tensor<4x8x3x1x1xf32>
}

// -----

shard.grid @mesh(shape = 2x4x1x1)

// A replicated value used with a split one is sliced without
// communication, folded into its broadcast.
// CHECK-LABEL: func.func @slices(
// CHECK-SAME: %[[W:.*]]: tensor<5x3xf32>, %[[X:.*]]: tensor<2x2x3xf32>)
func.func @slices(%w: tensor<5x3xf32>, %x: tensor<4x8x3xf32>) -> tensor<4x8x5xf32> {
  %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<4x8x3xf32>
  // CHECK: %[[B:.*]] = nn.broadcast %[[W]] dims [0] : tensor<5x3xf32> -> tensor<2x5x3xf32>
  %b = nn.broadcast %w dims [0] : tensor<5x3xf32> -> tensor<4x5x3xf32>
  // CHECK-NEXT: nn.linear %[[X]], %[[B]] : tensor<2x2x3xf32>, tensor<2x5x3xf32> -> tensor<2x2x5xf32>
  %y = nn.linear %x1, %b : tensor<4x8x3xf32>, tensor<4x5x3xf32> -> tensor<4x8x5xf32>
  // CHECK-NOT: shard.all_slice
  // CHECK: shard.all_gather
  return %y : tensor<4x8x5xf32>
}
