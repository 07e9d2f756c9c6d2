// RUN: not metac-opt %s --meta-shard-optimizer-state=stage=3 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not metac-opt %s --meta-shard-optimizer-state 2>&1 | FileCheck %s --check-prefix=STATE

// The ZeRO pass on hand-written IR: a stage it does not implement, and
// optimizer state that is not a function argument of its own (the pass
// retypes the argument to this rank's part). The pass on specs, and its
// equivalence on MPI meshes: test/metac/distributed/equivalence-zero.test.

// STAGE: error: ZeRO stage 3 is not implemented (1: state; 2: state and gradients)
// STATE: error: 'meta.outer_step' op has optimizer state that is not an argument of its function used by it alone, which --zero cannot shard

shard.grid @mesh(shape = 2x1x1x1x1x1)

func.func @step(%p: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %g = shard.all_reduce %x on @mesh grid_axes = [0] : tensor<4xf32> -> tensor<4xf32>
  // The momentum is computed here, not passed in.
  %m = nn.neg %p : tensor<4xf32>
  %r:2 = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.9, weight_decay = 0.0> params(%p : tensor<4xf32>) grads(%g : tensor<4xf32>) state(%m : tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
