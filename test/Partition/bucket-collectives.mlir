// Where bucketing may put a merged all-reduce.
// RUN: metac-opt %s --meta-bucket-collectives --split-input-file | FileCheck %s

shard.grid @mesh(shape = 1x2x2x1x1x1)

// Over several keys (grid axes): merging the first key's bucket moves users
// of its results, which may reorder the next key's all-reduces; that key's
// buckets are formed in the order after the move. %a1 and %a2 (tensor axis)
// share a bucket, placed after %a2's operand, which depends on %n: %m's
// operand, a user of %a1, moves after it. Then %m (data axis), listed
// before %n, depends on %n's result and cannot share its bucket.
// CHECK-LABEL: func.func @reordered(
// CHECK-SAME: %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<4xf32>)
func.func @reordered(%a: tensor<4xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[N:.*]] = shard.all_reduce %[[B]] on @mesh grid_axes = [1]
  // CHECK: %[[SUM:.*]] = nn.add %[[N]], %[[C]]
  // CHECK: %[[PACKED:.*]] = tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  // CHECK: %[[R:.*]] = shard.all_reduce %[[PACKED]] on @mesh grid_axes = [2] : tensor<8xf32>
  // CHECK: %[[A1:.*]] = nn.reshape %{{.*}} : tensor<4xf32> -> tensor<4xf32>
  // CHECK: %[[NEG:.*]] = nn.neg %[[A1]]
  // CHECK: %[[M:.*]] = shard.all_reduce %[[NEG]] on @mesh grid_axes = [1] : tensor<4xf32>
  // CHECK: return %[[M]], %{{.*}}
  %a1 = shard.all_reduce %a on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  %neg = nn.neg %a1 : tensor<4xf32>
  %m = shard.all_reduce %neg on @mesh grid_axes = [1] : tensor<4xf32> -> tensor<4xf32>
  %n = shard.all_reduce %b on @mesh grid_axes = [1] : tensor<4xf32> -> tensor<4xf32>
  %sum = nn.add %n, %c : tensor<4xf32>
  %a2 = shard.all_reduce %sum on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  return %m, %a2 : tensor<4xf32>, tensor<4xf32>
}

// -----

shard.grid @mesh(shape = 1x1x2x2x1x1)

// A pipeline stage receives what it was sent before each of its collectives
// (so that two stages never wait in collectives for each other's
// receives): bucketing must not move a collective across a send or a
// receive. %r1 and %r2 stay apart; %r3 and %r4 merge after the receive.
// CHECK-LABEL: func.func @transfers(
// CHECK-SAME: %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
func.func @transfers(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK-NEXT: %[[R1:.*]] = shard.all_reduce %[[A]] on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  // CHECK-NEXT: shard.send %[[A]]
  // CHECK-NEXT: %[[R2:.*]] = shard.all_reduce %[[B]] on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  // CHECK-NEXT: tensor.empty
  // CHECK-NEXT: shard.recv
  // CHECK-NEXT: nn.reshape %[[A]]
  // CHECK-NEXT: nn.reshape %[[B]]
  // CHECK-NEXT: tensor.concat
  // CHECK-NEXT: shard.all_reduce %{{.*}} on @mesh grid_axes = [2] : tensor<8xf32> -> tensor<8xf32>
  %r1 = shard.all_reduce %a on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  %s = shard.send %a on @mesh grid_axes = [3] destination = [1] : (tensor<4xf32>) -> tensor<4xf32>
  %r2 = shard.all_reduce %b on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %x = shard.recv %e on @mesh grid_axes = [3] source = [1] : (tensor<4xf32>) -> tensor<4xf32>
  %r3 = shard.all_reduce %a on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  %r4 = shard.all_reduce %b on @mesh grid_axes = [2] : tensor<4xf32> -> tensor<4xf32>
  return %r1, %r2, %r3, %r4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
