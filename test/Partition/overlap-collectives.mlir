// meta-hoist-collectives and meta-overlap-collectives (--overlap).
// RUN: metac-opt %s --meta-hoist-collectives=overlap=true --split-input-file | FileCheck %s --check-prefix=HOIST
// RUN: metac-opt %s --meta-hoist-collectives=overlap=true --meta-bucket-collectives=bucket-bytes=16 --meta-overlap-collectives=overlap=true --split-input-file | FileCheck %s --check-prefix=SPLIT
// Off by default and with overlap=false: nothing moves, nothing is split.
// RUN: metac-opt %s --meta-hoist-collectives --meta-overlap-collectives --split-input-file | FileCheck %s --check-prefix=OFF
// RUN: metac-opt %s --meta-hoist-collectives=overlap=false --meta-overlap-collectives=overlap=false --split-input-file | FileCheck %s --check-prefix=OFF
// RUN: not metac-opt %s --meta-hoist-collectives=overlap=maybe --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: overlap must be true or false, got 'maybe'

shard.grid @mesh(shape = 2x1x1x1x1x1)

// A backward pass as autodiff leaves it: every gradient's sum over the
// tasks and its all-reduce at the end. Hoisted, each sum and all-reduce
// follows the op that computes its operand: the last layer's gradient %g2
// is reduced while %g1 is still being computed.
// HOIST-LABEL: func.func @backward(
// HOIST: %[[G2:.*]] = nn.mul
// HOIST-NEXT: %[[S2:.*]] = nn.reduce_sum %[[G2]] dims [0]
// HOIST-NEXT: %[[R2:.*]] = shard.all_reduce %[[S2]]
// HOIST-NEXT: nn.reshape %[[G2]]
// HOIST-NEXT: nn.matmul
// HOIST-NEXT: %[[G1:.*]] = nn.reshape
// HOIST-NEXT: %[[S1:.*]] = nn.reduce_sum %[[G1]] dims [0]
// HOIST-NEXT: %[[R1:.*]] = shard.all_reduce %[[S1]]
// HOIST-NEXT: nn.add %[[R1]], %[[R2]]
//
// Split (buckets of 16 bytes keep the two apart): %r2 has %g1's matmul
// before its first use, so it is started (metac.async) and waited for
// right before that use; %r1 is used at once and stays blocking.
// SPLIT-LABEL: func.func @backward(
// SPLIT: %[[R2:.*]] = shard.all_reduce %{{.*}} on @mesh grid_axes = [0] {metac.async} : tensor<4xf32> -> tensor<4xf32>
// SPLIT-NEXT: nn.reshape
// SPLIT-NEXT: nn.matmul
// SPLIT-NEXT: nn.reshape
// SPLIT-NEXT: nn.reduce_sum
// SPLIT-NEXT: %[[R1:.*]] = shard.all_reduce %{{.*}} on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
// SPLIT-NEXT: %[[W2:.*]] = meta.wait %[[R2]] : tensor<4xf32>
// SPLIT-NEXT: nn.add %[[R1]], %[[W2]]
//
// OFF-LABEL: func.func @backward(
// OFF-NOT: metac.async
// OFF-NOT: meta.wait
// OFF: nn.matmul
// OFF: nn.reduce_sum
// OFF: nn.reduce_sum
func.func @backward(%x: tensor<2x4xf32>, %w: tensor<2x4x4xf32>) -> tensor<4xf32> {
  %g2 = nn.mul %x, %x : tensor<2x4xf32>
  %y = nn.reshape %g2 : tensor<2x4xf32> -> tensor<2x1x4xf32>
  %g1m = nn.matmul %y, %w : tensor<2x1x4xf32>, tensor<2x4x4xf32> -> tensor<2x1x4xf32>
  %g1 = nn.reshape %g1m : tensor<2x1x4xf32> -> tensor<2x4xf32>
  %s2 = nn.reduce_sum %g2 dims [0] : tensor<2x4xf32> -> tensor<4xf32>
  %s1 = nn.reduce_sum %g1 dims [0] : tensor<2x4xf32> -> tensor<4xf32>
  %r1 = shard.all_reduce %s1 on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %r2 = shard.all_reduce %s2 on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %sum = nn.add %r1, %r2 : tensor<4xf32>
  return %sum : tensor<4xf32>
}

// -----

shard.grid @mesh(shape = 2x1x1x2x1x1)

// Nothing moves above a send or a receive (a pipeline stage's peer expects
// them in program order), and a collective whose result is used at once
// has nothing to overlap.
// HOIST-LABEL: func.func @transfers(
// HOIST: shard.send
// HOIST-NEXT: %[[R:.*]] = shard.all_reduce %{{.*}} grid_axes = [0]
// HOIST-NEXT: nn.neg %[[R]]
// SPLIT-LABEL: func.func @transfers(
// SPLIT-NOT: metac.async
// SPLIT: return
func.func @transfers(%a: tensor<4xf32>) -> tensor<4xf32> {
  %s = shard.send %a on @mesh grid_axes = [3] destination = [1] : (tensor<4xf32>) -> tensor<4xf32>
  %r = shard.all_reduce %a on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  %n = nn.neg %r : tensor<4xf32>
  return %n : tensor<4xf32>
}
