// RUN: metac-opt %s -split-input-file -verify-diagnostics

func.func @f(%l: tensor<f32>, %g: tensor<3xf32>) {
  // expected-error@+1 {{'meta.update_guard' op expects norms of type tensor<1xf64> (one per gradient), got 'tensor<2xf64>'}}
  %n, %gate = meta.update_guard %l grads(%g : tensor<3xf32>) : tensor<f32> -> tensor<2xf64>, tensor<2xf64>
  return
}
// -----
func.func @f(%l: tensor<f32>, %g: tensor<3xf32>) {
  // expected-error@+1 {{'meta.update_guard' op expects a gate of type tensor<2xf64>, got 'tensor<2xf32>'}}
  %n, %gate = meta.update_guard %l grads(%g : tensor<3xf32>) : tensor<f32> -> tensor<1xf64>, tensor<2xf32>
  return
}
// -----
func.func @f(%l: tensor<f32>, %g: tensor<3xf32>) {
  // expected-error@+1 {{'meta.update_guard' op expects clip_norm > 0, got -1}}
  %n, %gate = meta.update_guard %l grads(%g : tensor<3xf32>) clip_norm -1.0 : tensor<f32> -> tensor<1xf64>, tensor<2xf64>
  return
}
// -----
func.func @f(%l: tensor<f32>, %g: tensor<3xi32>) {
  // expected-error@+1 {{'meta.update_guard' op expects float gradients, got 'tensor<3xi32>'}}
  %n, %gate = meta.update_guard %l grads(%g : tensor<3xi32>) : tensor<f32> -> tensor<1xf64>, tensor<2xf64>
  return
}
// -----
func.func @f(%l: tensor<f32>) {
  // expected-error@+1 {{'meta.update_guard' op expects at least one gradient}}
  %n, %gate = "meta.update_guard"(%l) : (tensor<f32>) -> (tensor<0xf64>, tensor<2xf64>)
  return
}
// -----
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>, %gate: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op expects a gate of type tensor<2xf64>, got 'tensor<3xf64>'}}
  %p = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state() gate(%gate : tensor<3xf64>)
  return %p : tensor<3xf32>
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects clip_norm > 0, got 0}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64, clip_norm = 0.0 : f64} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects on_nonfinite stop, skip or ignore, got 'later'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64, on_nonfinite = "later"} {
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
  // expected-error@+1 {{'meta.evaluate' op expects diverge_above > 0, got -1}}
  meta.evaluate tasks @sine count 10 steps [1] diverge_above -1.0
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op clips the gradient (clip_norm), which needs the update guard that on_nonfinite = ignore leaves out}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64, clip_norm = 1.0 : f64, on_nonfinite = "ignore"} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects precision f32, bf16 or fp16, got 'f8'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64, precision = "f8"} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op expects loss_scale dynamic or off, got 'static'}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64, precision = "fp16", loss_scale = "static"} {
}
// -----
meta.tasks @sine "sinusoid" support 5 query 5 : tensor<1xf32> -> tensor<1xf32> config {}
func.func @model(%w: tensor<1x1xf32> {meta.param = "fc.weight"}, %x: tensor<1xf32>) -> tensor<1xf32> {
  %y = nn.linear %x, %w : tensor<1xf32>, tensor<1x1xf32> -> tensor<1xf32>
  return %y : tensor<1xf32>
}
// expected-error@+1 {{'meta.train' op scales the loss dynamically (loss_scale), which needs the update guard that on_nonfinite = ignore leaves out}}
meta.train @t model @model tasks @sine loss <mse>
    algorithm #meta.maml<steps = 1, inner_lr = 0.01, order = 2>
    optimizer #meta.sgd<lr = 0.001, momentum = 0.0, weight_decay = 0.0>
    attributes {meta_batch = 4 : i64, iterations = 10 : i64, seed = 0 : i64, precision = "fp16", loss_scale = "dynamic", on_nonfinite = "ignore"} {
}
