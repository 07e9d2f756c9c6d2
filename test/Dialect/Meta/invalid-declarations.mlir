// RUN: metac-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the meta declarations (tasks, train, evaluate).

// Any task distribution that gives ways has at least two.
// expected-error@+1 {{'meta.tasks' op expects ways >= 2, got 1}}
meta.tasks @ep "episodes" support 4 query 4 ways 1 : tensor<3xf32> -> tensor<i64> config {}
// -----
// expected-error@+1 {{'meta.tasks' op unknown task distribution kind 'omniglot'}}
meta.tasks @t "omniglot" support 5 query 5 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}
// -----
// expected-error@+1 {{'meta.tasks' op expects support and query sizes >= 1, got 0 and 10}}
meta.tasks @t "sinusoid" support 0 query 10 : tensor<1xf32> -> tensor<1xf32> config {}
// -----
// expected-error@+1 {{'meta.tasks' op expects support and query sizes >= 1, got 10 and -10}}
meta.tasks @t "sinusoid" support 10 query -10 : tensor<1xf32> -> tensor<1xf32> config {}
// -----
// expected-error@+1 {{'meta.tasks' op classification tasks expect ways >= 2}}
meta.tasks @t "fashion_mnist" support 5 query 5 : tensor<1x28x28xf32> -> tensor<i64> config {}
// -----
// expected-error@+1 {{'meta.tasks' op classification tasks expect ways >= 2}}
meta.tasks @t "image_folder" support 5 query 5 ways 1 : tensor<3x8x8xf32> -> tensor<i64> config {}
// -----
// expected-error@+1 {{'meta.tasks' op classification tasks expect ways >= 2}}
meta.tasks @t "image_folder" support 5 query 5 ways -5 : tensor<3x8x8xf32> -> tensor<i64> config {}
// -----
// expected-error@+1 {{'meta.tasks' op classification targets must be 0-d integer tensors, got 'tensor<1xi64>'}}
meta.tasks @t "fashion_mnist" support 5 query 5 ways 5 : tensor<1x28x28xf32> -> tensor<1xi64> config {}
// -----
// expected-error@+1 {{'meta.tasks' op classification targets must be 0-d integer tensors, got 'tensor<f32>'}}
meta.tasks @t "image_folder" support 5 query 5 ways 5 : tensor<3x8x8xf32> -> tensor<f32> config {}
// -----
// expected-error@+1 {{'meta.tasks' op support and query sizes must be multiples of ways (5)}}
meta.tasks @t "fashion_mnist" support 5 query 12 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}
// -----
// expected-error@+1 {{'meta.tasks' op support and query sizes must be multiples of ways (3)}}
meta.tasks @t "image_folder" support 4 query 6 ways 3 : tensor<3x8x8xf32> -> tensor<i32> config {}
// -----
// expected-error@+1 {{'meta.tasks' op attribute 'input_type' failed to satisfy constraint: type attribute of statically shaped tensor}}
meta.tasks @t "sinusoid" support 5 query 5 : tensor<?xf32> -> tensor<1xf32> config {}
// -----
// expected-error@+1 {{'meta.tasks' op attribute 'target_type' failed to satisfy constraint: type attribute of statically shaped tensor}}
meta.tasks @t "sinusoid" support 5 query 5 : tensor<1xf32> -> f32 config {}
// -----
func.func @f() {
  // expected-error@+1 {{'meta.tasks' op expects parent op 'builtin.module'}}
  meta.tasks @t "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
  return
}

//===----------------------------------------------------------------------===//
// meta.train: attributes
//===----------------------------------------------------------------------===//
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects meta_batch >= 1, got 0}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 0 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects meta_batch >= 1, got -4}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = -4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects iterations >= 0, got -1}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = -1 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects checkpoint_every >= 1, got 0}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                checkpoint_every = 0 : i64, checkpoint_dir = "ckpt"} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op checkpoint_every and checkpoint_dir go together}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                checkpoint_every = 100 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op checkpoint_every and checkpoint_dir go together}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64,
                checkpoint_dir = "ckpt"} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op meta_batch 12 is not divisible by task axis size 4 times 2 micro-batches}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 12 : i64, iterations = 10 : i64, seed = 0 : i64,
                plan = #meta.plan<task = 4, data = 1, tensor = 1, pipeline = 1, micro_batches = 2, schedule = gpipe>} {
}
// -----
// task * micro_batches overflows int64: the check must not divide by it.
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op meta_batch 8 is not divisible by task axis size 4294967296 times 4294967296 micro-batches}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 8 : i64, iterations = 10 : i64, seed = 0 : i64,
                plan = #meta.plan<task = 4294967296, data = 1, tensor = 1, pipeline = 1, micro_batches = 4294967296, schedule = gpipe>} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op requires attribute 'seed'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// An optimizer is not an algorithm.
// expected-error@+1 {{'meta.train' op attribute 'algorithm' failed to satisfy constraint}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op attribute 'optimizer' failed to satisfy constraint}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.reptile<steps = 1, inner_lr = 0.01>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}

//===----------------------------------------------------------------------===//
// meta.train: the model and the tasks it names
//===----------------------------------------------------------------------===//
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
// expected-error@+1 {{'meta.train' op model 'missing' is not a func.func}}
meta.train @t model @missing tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
// expected-error@+1 {{'meta.train' op model 'sine' is not a func.func}}
meta.train @t model @sine tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op tasks 'model' is not a meta.tasks}}
meta.train @t model @model tasks @model loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op tasks 'nowhere' is not a meta.tasks}}
meta.train @t model @model tasks @nowhere loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model() -> tensor<1xf32> {
  %c = arith.constant dense<1.0> : tensor<1xf32>
  return %c : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model 'model' must take a sample and return one value (and, marked meta.aux_loss, an auxiliary loss)}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%x: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>) {
  return %x, %x : tensor<1xf32>, tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model 'model' must take a sample and return one value (and, marked meta.aux_loss, an auxiliary loss)}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%x: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32> {meta.aux_loss}) {
  return %x, %x : tensor<1xf32>, tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model 'model' returns an auxiliary loss that is not a float scalar: 'tensor<1xf32>'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %b: tensor<1xf32>,
                 %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w, %b : tensor<1xf32>, tensor<1x1xf32>, tensor<1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model argument 1 is neither a named parameter (meta.param) nor the last argument}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
// meta.param must be a string.
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = 0 : i64}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model argument 0 is neither a named parameter (meta.param) nor the last argument}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x2xf32> {meta.param = "fc.weight"}, %x: tensor<2xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<2xf32>, tensor<1x2xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op model 'model' takes 'tensor<2xf32>' but tasks 'sine' give inputs of type 'tensor<1xf32>'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%x: tensor<1xf32>) -> f32 {
  %c = arith.constant 1.0 : f32
  return %c : f32
}
// expected-error@+1 {{'meta.train' op model output must be a ranked tensor}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<4x1xf32> {meta.param = "body.weight"}, %x: tensor<1xf32>) -> tensor<4xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<4x1xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// expected-error@+1 {{'meta.train' op protonet needs classification tasks}}
meta.train @t model @model tasks @sine loss <cross_entropy>
    algorithm #meta.protonet<distance = squared_euclidean>
    optimizer #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
// Episodes with float targets are not classification tasks either.
meta.tasks @ep "episodes" support 4 query 4 : tensor<3xf32> -> tensor<f32> config {}
func.func @model(%w: tensor<4x3xf32> {meta.param = "body.weight"}, %x: tensor<3xf32>) -> tensor<4xf32> {
  %y = nn.linear %x, %w : tensor<3xf32>, tensor<4x3xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// expected-error@+1 {{'meta.train' op protonet needs classification tasks}}
meta.train @t model @model tasks @ep loss <cross_entropy>
    algorithm #meta.protonet<distance = squared_euclidean>
    optimizer #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<2x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<2xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<2x1xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
// expected-error@+1 {{'meta.train' op mse loss compares the model output 'tensor<2xf32>' with targets of type 'tensor<1xf32>'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf64> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf64> {
  %xd = arith.extf %x : tensor<1xf32> to tensor<1xf64>
  %y = nn.linear %xd, %w : tensor<1xf64>, tensor<1x1xf64> -> tensor<1xf64>
  return %y : tensor<1xf64>
}
// expected-error@+1 {{'meta.train' op mse loss compares the model output 'tensor<1xf64>' with targets of type 'tensor<1xf32>'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.reptile<steps = 1, inner_lr = 0.01>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<5x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<5xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<5x1xf32> -> tensor<5xf32>
  return %y : tensor<5xf32>
}
// expected-error@+1 {{'meta.train' op cross_entropy loss needs integer class labels, tasks give 'tensor<1xf32>'}}
meta.train @t model @model tasks @sine loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @ep "episodes" support 4 query 4 : tensor<3xf32> -> tensor<2xi64> config {}
func.func @model(%w: tensor<5x3xf32> {meta.param = "fc.weight"}, %x: tensor<3xf32>) -> tensor<5xf32> {
  %y = nn.linear %x, %w : tensor<3xf32>, tensor<5x3xf32> -> tensor<5xf32>
  return %y : tensor<5xf32>
}
// expected-error@+1 {{'meta.train' op cross_entropy loss needs integer class labels, tasks give 'tensor<2xi64>'}}
meta.train @t model @model tasks @ep loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @fashion "fashion_mnist" support 5 query 5 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}
func.func @model(%w: tensor<5x28xf32> {meta.param = "head.weight"}, %x: tensor<1x28x28xf32>) -> tensor<1x28x5xf32> {
  %y = nn.linear %x, %w : tensor<1x28x28xf32>, tensor<5x28xf32> -> tensor<1x28x5xf32>
  return %y : tensor<1x28x5xf32>
}
// expected-error@+1 {{'meta.train' op cross_entropy loss needs a model output of one logit per class, got 'tensor<1x28x5xf32>'}}
meta.train @t model @model tasks @fashion loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @fashion "fashion_mnist" support 5 query 5 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}
func.func @model(%w: tensor<4x784xf32> {meta.param = "head.weight"}, %x: tensor<1x28x28xf32>) -> tensor<4xf32> {
  %f = nn.reshape %x : tensor<1x28x28xf32> -> tensor<784xf32>
  %y = nn.linear %f, %w : tensor<784xf32>, tensor<4x784xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}
// expected-error@+1 {{'meta.train' op model output 'tensor<4xf32>' has 4 logits but tasks 'fashion' are 5-way}}
meta.train @t model @model tasks @fashion loss <cross_entropy>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
meta.tasks @ep "episodes" support 6 query 6 ways 3 : tensor<3xf32> -> tensor<i32> config {}
func.func @model(%w: tensor<2x3xf32> {meta.param = "head.weight"}, %x: tensor<3xf32>) -> tensor<2xf32> {
  %y = nn.linear %x, %w : tensor<3xf32>, tensor<2x3xf32> -> tensor<2xf32>
  return %y : tensor<2xf32>
}
// expected-error@+1 {{'meta.train' op model output 'tensor<2xf32>' has 2 logits but tasks 'ep' are 3-way}}
meta.train @t model @model tasks @ep loss <cross_entropy>
    algorithm #meta.anil<steps = 1, inner_lr = 0.01, order = 2, head = "head">
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
}
// -----
func.func @f() {
  // expected-error@+1 {{'meta.train' op expects parent op 'builtin.module'}}
  meta.train @t model @model tasks @sine loss <mse>
      algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
      optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
      attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  }
  return
}

//===----------------------------------------------------------------------===//
// meta.evaluate
//===----------------------------------------------------------------------===//
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op expects count >= 1, got 0}}
  meta.evaluate tasks @sine count 0 steps [0]
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op expects count >= 1, got -3}}
  meta.evaluate tasks @sine count -3 steps [0]
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op expects at least one number of steps}}
  meta.evaluate tasks @sine count 10 steps []
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op expects steps >= 0, got -1}}
  meta.evaluate tasks @sine count 10 steps [0, -1, 5]
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op tasks 'model' is not a meta.tasks}}
  meta.evaluate tasks @model count 10 steps [0]
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
meta.tasks @wide "sinusoid" support 5 query 5 : tensor<2xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op evaluation tasks 'wide' have samples 'tensor<2xf32>' -> 'tensor<1xf32>' but training tasks 'sine' have 'tensor<1xf32>' -> 'tensor<1xf32>'}}
  meta.evaluate tasks @wide count 10 steps [0]
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
meta.tasks @other "episodes" support 5 query 5 : tensor<1xf32> -> tensor<1xf64> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64} {
  // expected-error@+1 {{'meta.evaluate' op evaluation tasks 'other' have samples 'tensor<1xf32>' -> 'tensor<1xf64>' but training tasks 'sine' have 'tensor<1xf32>' -> 'tensor<1xf32>'}}
  meta.evaluate tasks @other count 10 steps [0]
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @f() {
  // expected-error@+1 {{'meta.evaluate' op expects parent op 'meta.train'}}
  meta.evaluate tasks @sine count 10 steps [0]
  return
}

//===----------------------------------------------------------------------===//
// meta.task_batch
//===----------------------------------------------------------------------===//
// -----
func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op tasks 'f' is not a meta.tasks}}
  %sx, %sy, %qx, %qy = meta.task_batch @f : tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>
  return
}
// -----
meta.tasks @sine "sinusoid" support 5 query 10 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op result 2 has type 'tensor<5x1xf32>', expected 'tensor<10x1xf32>'}}
  %sx, %sy, %qx, %qy = meta.task_batch @sine : tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>
  return
}
// -----
meta.tasks @fashion "fashion_mnist" support 5 query 10 ways 5 : tensor<1x28x28xf32> -> tensor<i64> config {}
func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op result 1 has type 'tensor<5xi32>', expected 'tensor<5xi64>'}}
  %sx, %sy, %qx, %qy = meta.task_batch @fashion : tensor<5x1x28x28xf32>, tensor<5xi32>, tensor<10x1x28x28xf32>, tensor<10xi64>
  return
}
// -----
meta.tasks @sine "sinusoid" support 5 query 10 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op result 0 has type 'tensor<1x5xf32>', expected 'tensor<5x1xf32>'}}
  %sx, %sy, %qx, %qy = meta.task_batch @sine : tensor<1x5xf32>, tensor<5x1xf32>, tensor<10x1xf32>, tensor<10x1xf32>
  return
}
