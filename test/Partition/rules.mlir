// Sharding rules of the partitioner on small functions, one per rule.
// RUN: metac-opt %s --meta-partition --split-input-file | FileCheck %s

shard.grid @mesh(shape = 2x4x1x1x1x1)

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

shard.grid @mesh(shape = 2x4x1x1x1x1)

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

shard.grid @mesh(shape = 2x4x1x1x1x1)

// A reshape keeps a split dimension that leads a merge (8 x 6 into 48:
// each rank's 2 rows are 12 contiguous elements); softmax over a split
// axis gathers it.
// CHECK-LABEL: func.func @gathers(
func.func @gathers(%x: tensor<4x8x6xf32>) -> (tensor<4x48xf32>, tensor<4x8x6xf32>) {
  %s = shard.sharding @mesh split_axes = [[0], [1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<4x8x6xf32>
  // CHECK: nn.reshape %{{.*}} : tensor<2x2x6xf32> -> tensor<2x12xf32>
  %r = nn.reshape %x1 : tensor<4x8x6xf32> -> tensor<4x48xf32>
  // CHECK: %[[G1:.*]] = shard.all_gather %{{.*}} on @mesh grid_axes = [1] gather_axis = 1 : tensor<2x2x6xf32> -> tensor<2x8x6xf32>
  // CHECK-NEXT: nn.softmax %[[G1]] axis 1 : tensor<2x8x6xf32>
  %sm = nn.softmax %x1 axis 1 : tensor<4x8x6xf32>
  return %r, %sm : tensor<4x48xf32>, tensor<4x8x6xf32>
}

// -----

shard.grid @mesh(shape = 2x1x4x1x1x1)

// Image ops keep their leading (task, sample) splits: each rank convolves,
// (axis 2, the tensor axis, splits samples and channels here: with a data
// axis, batch norm is first decomposed, below)
// pools and normalises its own tasks. A convolution gathers its contracted
// channels and slices per-task weights to its tasks; pooling keeps a
// channel split; batch norm keeps the channel split but gathers a split
// dimension it reduces (samples); a weight gradient summed over split
// samples is partial.
// CHECK-LABEL: func.func @spatial(
// CHECK-SAME: %[[X:.*]]: tensor<2x8x2x10x10xf32>, %[[W:.*]]: tensor<4x3x8x3x3xf32>, %[[G:.*]]: tensor<2x2x3x10x10xf32>,
func.func @spatial(%x: tensor<4x8x8x10x10xf32>, %w: tensor<4x3x8x3x3xf32>, %g: tensor<4x8x3x10x10xf32>, %gamma: tensor<4x8xf32>, %beta: tensor<4x8xf32>, %gamma3: tensor<4x3xf32>, %beta3: tensor<4x3xf32>) -> (tensor<4x8x3x10x10xf32>, tensor<4x8x8x5x5xf32>, tensor<4x8x8x10x10xf32>, tensor<4x3x8x3x3xf32>, tensor<4x8x8x10x10xf32>, tensor<3x8x3x3xf32>, tensor<4x8x3x10x10xf32>) {
  %s = shard.sharding @mesh split_axes = [[0], [], [2]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<4x8x8x10x10xf32>
  // CHECK: %[[XC:.*]] = shard.all_gather %[[X]] on @mesh grid_axes = [2] gather_axis = 2 : tensor<2x8x2x10x10xf32> -> tensor<2x8x8x10x10xf32>
  // CHECK-NEXT: %[[WT:.*]] = shard.all_slice %[[W]] on @mesh grid_axes = [0] slice_axis = 0 : tensor<4x3x8x3x3xf32> -> tensor<2x3x8x3x3xf32>
  // CHECK-NEXT: %[[C:.*]] = nn.conv2d %[[XC]], %[[WT]] {{.*}} : tensor<2x8x8x10x10xf32>, tensor<2x3x8x3x3xf32> -> tensor<2x8x3x10x10xf32>
  %c = nn.conv2d %x1, %w stride [1, 1] padding [1, 1] : tensor<4x8x8x10x10xf32>, tensor<4x3x8x3x3xf32> -> tensor<4x8x3x10x10xf32>
  // CHECK-NEXT: %[[P:.*]] = nn.max_pool2d %[[X]] {{.*}} : tensor<2x8x2x10x10xf32> -> tensor<2x8x2x5x5xf32>
  %p = nn.max_pool2d %x1 kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<4x8x8x10x10xf32> -> tensor<4x8x8x5x5xf32>
  // CHECK: %[[N:.*]] = nn.batch_norm %[[X]], %{{.*}}, %{{.*}} channel 2 reduce [1, 3, 4] {{.*}} : tensor<2x8x2x10x10xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x8x2x10x10xf32>
  %n = nn.batch_norm %x1, %gamma, %beta channel 2 reduce [1, 3, 4] epsilon 1.0e-05 : tensor<4x8x8x10x10xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8x8x10x10xf32>
  %s2 = shard.sharding @mesh split_axes = [[0], [2]] : !shard.sharding
  %g1 = shard.shard %g to %s2 : tensor<4x8x3x10x10xf32>
  // CHECK: %[[DW:.*]] = nn.conv2d_backward_weight %{{.*}}, %[[G]] {{.*}} : tensor<2x2x8x10x10xf32>, tensor<2x2x3x10x10xf32> -> tensor<2x3x8x3x3xf32>
  %dw = nn.conv2d_backward_weight %x1, %g1 stride [1, 1] padding [1, 1] : tensor<4x8x8x10x10xf32>, tensor<4x8x3x10x10xf32> -> tensor<4x3x8x3x3xf32>
  // CHECK-NEXT: %[[DX:.*]] = nn.conv2d_backward_input %[[G]], %[[WT]] {{.*}} : tensor<2x2x3x10x10xf32>, tensor<2x3x8x3x3xf32> -> tensor<2x2x8x10x10xf32>
  %dx = nn.conv2d_backward_input %g1, %w stride [1, 1] padding [1, 1] : tensor<4x8x3x10x10xf32>, tensor<4x3x8x3x3xf32> -> tensor<4x8x8x10x10xf32>
  // CHECK-NEXT: %[[DS:.*]] = nn.conv2d_backward_weight %{{.*}}, %[[G]] {{.*}} -> tensor<3x8x3x3xf32>
  %ds = nn.conv2d_backward_weight %x1, %g1 stride [1, 1] padding [1, 1] : tensor<4x8x8x10x10xf32>, tensor<4x8x3x10x10xf32> -> tensor<3x8x3x3xf32>
  // CHECK-NEXT: %[[GS:.*]] = shard.all_gather %[[G]] on @mesh grid_axes = [2] gather_axis = 1 : tensor<2x2x3x10x10xf32> -> tensor<2x8x3x10x10xf32>
  // CHECK: nn.batch_norm %[[GS]], {{.*}} : tensor<2x8x3x10x10xf32>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x8x3x10x10xf32>
  %ng = nn.batch_norm %g1, %gamma3, %beta3 channel 2 reduce [1, 3, 4] epsilon 1.0e-05 : tensor<4x8x3x10x10xf32>, tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x8x3x10x10xf32>
  // CHECK: shard.all_reduce %[[DW]] on @mesh grid_axes = [2]
  // CHECK: shard.all_reduce %[[DS]] on @mesh grid_axes = [0, 2]
  return %c, %p, %n, %dw, %dx, %ds, %ng : tensor<4x8x3x10x10xf32>, tensor<4x8x8x5x5xf32>, tensor<4x8x8x10x10xf32>, tensor<4x3x8x3x3xf32>, tensor<4x8x8x10x10xf32>, tensor<3x8x3x3xf32>, tensor<4x8x3x10x10xf32>
}

// -----

shard.grid @mesh(shape = 2x4x1x1x1x1)

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

// -----

shard.grid @mesh(shape = 1x2x1x1x1x1)

// With a data axis, batch norm is decomposed before partitioning: its
// statistics are local means completed by all-reduces of [tasks, channels],
// and the samples stay split (gathered only for the replicated return).
// CHECK-LABEL: func.func @data_parallel_batch_norm(
// CHECK-SAME: %[[X:.*]]: tensor<3x4x5x6x6xf32>
func.func @data_parallel_batch_norm(%x: tensor<3x8x5x6x6xf32>, %gamma: tensor<3x5xf32>, %beta: tensor<3x5xf32>) -> tensor<3x8x5x6x6xf32> {
  %s = shard.sharding @mesh split_axes = [[], [1]] : !shard.sharding
  %x1 = shard.shard %x to %s : tensor<3x8x5x6x6xf32>
  // CHECK-NOT: shard.all_gather
  // CHECK-NOT: nn.batch_norm
  // CHECK: %[[M:.*]] = nn.reduce_mean %[[X]] dims [1, 3, 4] : tensor<3x4x5x6x6xf32> -> tensor<3x5xf32>
  // CHECK: shard.all_reduce %{{.*}} on @mesh grid_axes = [1] : tensor<3x5xf32>
  // CHECK: nn.reduce_mean %{{.*}} dims [1, 3, 4] : tensor<3x4x5x6x6xf32> -> tensor<3x5xf32>
  // CHECK: shard.all_reduce %{{.*}} on @mesh grid_axes = [1] : tensor<3x5xf32>
  // CHECK: nn.rsqrt
  // CHECK-NOT: shard.all_gather
  // CHECK: nn.add %{{.*}} : tensor<3x4x5x6x6xf32>
  // CHECK-NEXT: shard.all_gather %{{.*}} gather_axis = 1 : tensor<3x4x5x6x6xf32> -> tensor<3x8x5x6x6xf32>
  %n = nn.batch_norm %x1, %gamma, %beta channel 2 reduce [1, 3, 4] epsilon 1.0e-05 : tensor<3x8x5x6x6xf32>, tensor<3x5xf32>, tensor<3x5xf32> -> tensor<3x8x5x6x6xf32>
  return %n : tensor<3x8x5x6x6xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1x1x2x1)

// Samples split over the data and expert axes at once (data major): the
// expert product moves their expert part onto the experts all-to-all
// inside each data group and keeps the data part; the weights, split by
// experts, are sliced by the data ranks' samples for free. Meeting samples
// split over both again, the part moves back; a sum over the samples is
// completed over the data axis alone, a softmax over them gathers both.
// CHECK-LABEL: func.func @data_and_expert(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x2x3xf32>, %[[W:.*]]: tensor<8x2x3x5xf32>, %[[Y:.*]]: tensor<2x4x2x5xf32>)
func.func @data_and_expert(%x: tensor<8x4x2x3xf32>, %w: tensor<8x4x3x5xf32>, %y: tensor<8x4x2x5xf32>) -> (tensor<8x4x2x5xf32>, tensor<4x2x5xf32>, tensor<8x4x2x5xf32>) {
  %samples = shard.sharding @mesh split_axes = [[1, 4]] : !shard.sharding
  %experts = shard.sharding @mesh split_axes = [[], [4]] : !shard.sharding
  %x1 = shard.shard %x to %samples : tensor<8x4x2x3xf32>
  %w1 = shard.shard %w to %experts : tensor<8x4x3x5xf32>
  %y1 = shard.shard %y to %samples : tensor<8x4x2x5xf32>
  // CHECK-DAG: %[[XE:.*]] = shard.all_to_all %[[X]] on @mesh grid_axes = [4] split_axis = 1 concat_axis = 0 : tensor<2x4x2x3xf32> -> tensor<4x2x2x3xf32>
  // CHECK-DAG: %[[WD:.*]] = shard.all_slice %[[W]] on @mesh grid_axes = [1] slice_axis = 0 : tensor<8x2x3x5xf32> -> tensor<4x2x3x5xf32>
  // CHECK: %[[P:.*]] = nn.matmul %[[XE]], %[[WD]] : tensor<4x2x2x3xf32>, tensor<4x2x3x5xf32> -> tensor<4x2x2x5xf32>
  %p = nn.matmul %x1, %w1 : tensor<8x4x2x3xf32>, tensor<8x4x3x5xf32> -> tensor<8x4x2x5xf32>
  // CHECK: %[[BACK:.*]] = shard.all_to_all %[[P]] on @mesh grid_axes = [4] split_axis = 0 concat_axis = 1 : tensor<4x2x2x5xf32> -> tensor<2x4x2x5xf32>
  // CHECK-NEXT: nn.add %[[BACK]], %[[Y]] : tensor<2x4x2x5xf32>
  %q = nn.add %p, %y1 : tensor<8x4x2x5xf32>
  // CHECK: %[[S:.*]] = nn.reduce_sum %[[P]] dims [0] : tensor<4x2x2x5xf32> -> tensor<2x2x5xf32>
  %s = nn.reduce_sum %p dims [0] : tensor<8x4x2x5xf32> -> tensor<4x2x5xf32>
  // CHECK: %[[G:.*]] = shard.all_gather %[[Y]] on @mesh grid_axes = [1, 4] gather_axis = 0 : tensor<2x4x2x5xf32> -> tensor<8x4x2x5xf32>
  // CHECK-NEXT: nn.softmax %[[G]] axis 0
  // CHECK: shard.all_reduce %[[S]] on @mesh grid_axes = [1] : tensor<2x2x5xf32>
  %m = nn.softmax %y1 axis 0 : tensor<8x4x2x5xf32>
  return %q, %s, %m : tensor<8x4x2x5xf32>, tensor<4x2x5xf32>, tensor<8x4x2x5xf32>
}

// -----

shard.grid @mesh(shape = 1x2x2x1x2x1)

// Samples split over data alone meet samples split over data and expert:
// sliced along expert (free). Where the experts' dimension is taken by
// another axis, the samples give up their expert part by a gather inside
// each data group.
// CHECK-LABEL: func.func @data_and_expert_refined(
// CHECK-SAME: %[[X:.*]]: tensor<2x2x2x3xf32>, %[[Z:.*]]: tensor<4x4x2x3xf32>
func.func @data_and_expert_refined(%x: tensor<8x4x2x3xf32>, %z: tensor<8x4x2x3xf32>, %w: tensor<8x4x3x5xf32>) -> (tensor<8x4x2x3xf32>, tensor<8x4x2x5xf32>) {
  %samples = shard.sharding @mesh split_axes = [[1, 4], [2]] : !shard.sharding
  %data = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %experts = shard.sharding @mesh split_axes = [[], [4]] : !shard.sharding
  %x1 = shard.shard %x to %samples : tensor<8x4x2x3xf32>
  %z1 = shard.shard %z to %data : tensor<8x4x2x3xf32>
  %w1 = shard.shard %w to %experts : tensor<8x4x3x5xf32>
  // CHECK: %[[ZS:.*]] = shard.all_slice %[[Z]] on @mesh grid_axes = [4] slice_axis = 0 : tensor<4x4x2x3xf32> -> tensor<2x4x2x3xf32>
  // CHECK: %[[ZT:.*]] = shard.all_slice %[[ZS]] on @mesh grid_axes = [2] slice_axis = 1 : tensor<2x4x2x3xf32> -> tensor<2x2x2x3xf32>
  // CHECK-NEXT: nn.add %[[X]], %[[ZT]] : tensor<2x2x2x3xf32>
  %a = nn.add %x1, %z1 : tensor<8x4x2x3xf32>
  // CHECK: %[[XD:.*]] = shard.all_gather %[[X]] on @mesh grid_axes = [4] gather_axis = 0 : tensor<2x2x2x3xf32> -> tensor<4x2x2x3xf32>
  // CHECK: nn.matmul %[[XD]], %{{.*}} : tensor<4x2x2x3xf32>, tensor<4x2x3x5xf32> -> tensor<4x2x2x5xf32>
  %p = nn.matmul %x1, %w1 : tensor<8x4x2x3xf32>, tensor<8x4x3x5xf32> -> tensor<8x4x2x5xf32>
  return %a, %p : tensor<8x4x2x3xf32>, tensor<8x4x2x5xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1x1x2x1)

// Samples split over data and expert meeting a dimension split over expert
// alone keep their data part: the expert part moves there all-to-all
// instead of both axes being gathered.
// CHECK-LABEL: func.func @data_and_expert_meets_expert(
// CHECK-SAME: %[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<4x2xf32>)
func.func @data_and_expert_meets_expert(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %experts = shard.sharding @mesh split_axes = [[4]] : !shard.sharding
  %samples = shard.sharding @mesh split_axes = [[], [1, 4]] : !shard.sharding
  %a1 = shard.shard %a to %experts : tensor<4x8xf32>
  %b1 = shard.shard %b to %samples : tensor<4x8xf32>
  // CHECK-DAG: %[[AD:.*]] = shard.all_slice %[[A]] on @mesh grid_axes = [1] slice_axis = 1 : tensor<2x8xf32> -> tensor<2x4xf32>
  // CHECK-DAG: %[[BE:.*]] = shard.all_to_all %[[B]] on @mesh grid_axes = [4] split_axis = 0 concat_axis = 1 : tensor<4x2xf32> -> tensor<2x4xf32>
  // CHECK: nn.add %[[AD]], %[[BE]] : tensor<2x4xf32>
  %c = nn.add %a1, %b1 : tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

shard.grid @mesh(shape = 1x2x1x1x2x1)

// A contraction over samples split over data on one side and over data and
// expert on the other refines the first (a free slice) and sums over both.
// CHECK-LABEL: func.func @data_and_expert_contraction(
// CHECK-SAME: %[[X:.*]]: tensor<4x3xf32>, %[[G:.*]]: tensor<2x5xf32>)
func.func @data_and_expert_contraction(%x: tensor<8x3xf32>, %g: tensor<8x5xf32>) -> tensor<3x5xf32> {
  %data = shard.sharding @mesh split_axes = [[1]] : !shard.sharding
  %samples = shard.sharding @mesh split_axes = [[1, 4]] : !shard.sharding
  %x1 = shard.shard %x to %data : tensor<8x3xf32>
  %g1 = shard.shard %g to %samples : tensor<8x5xf32>
  // CHECK: %[[XS:.*]] = shard.all_slice %[[X]] on @mesh grid_axes = [4] slice_axis = 0 : tensor<4x3xf32> -> tensor<2x3xf32>
  // CHECK-NEXT: %[[P:.*]] = nn.matmul %[[XS]], %[[G]] {transpose_lhs} : tensor<2x3xf32>, tensor<2x5xf32> -> tensor<3x5xf32>
  // CHECK-NOT: shard.all_gather
  // CHECK: shard.all_reduce %[[P]] on @mesh grid_axes = [1, 4]
  %p = nn.matmul %x1, %g1 {transpose_lhs} : tensor<8x3xf32>, tensor<8x5xf32> -> tensor<3x5xf32>
  return %p : tensor<3x5xf32>
}
