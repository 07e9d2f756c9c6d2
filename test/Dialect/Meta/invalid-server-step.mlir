// RUN: metac-opt %s -split-input-file -verify-diagnostics
// meta.server_step's verifier: what the servers can hold and how they pace.

func.func @f(%w: tensor<4x3xf32>, %gw: tensor<4x3xf32>, %l: tensor<f32>) {
  // The assembly format shows the operands; the results follow from them.
  %p:3 = meta.server_step #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> params(%w : tensor<4x3xf32>) grads(%gw : tensor<4x3xf32>) loss(%l : tensor<f32>) {guarded, servers = 2 : i64, staleness = 1 : i64}
  return
}
// -----
func.func @f(%w: tensor<4x3xf32>, %gw: tensor<3xf32>, %l: tensor<f32>) {
  // expected-error@+1 {{'meta.server_step' op expects one gradient of each parameter's type}}
  %p:3 = meta.server_step #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> params(%w : tensor<4x3xf32>) grads(%gw : tensor<3xf32>) loss(%l : tensor<f32>) {servers = 1 : i64, staleness = 0 : i64}
  return
}
// -----
func.func @f(%w: tensor<4xf32>, %b: tensor<4xf64>, %l: tensor<f32>) {
  // expected-error@+1 {{'meta.server_step' op expects parameters of one float type (the servers hold them as one vector), got 'f32' and 'tensor<4xf64>'}}
  %p:4 = meta.server_step #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> params(%w, %b : tensor<4xf32>, tensor<4xf64>) grads(%w, %b : tensor<4xf32>, tensor<4xf64>) loss(%l : tensor<f32>) {servers = 1 : i64, staleness = 0 : i64}
  return
}
// -----
func.func @f(%w: tensor<4xbf16>, %l: tensor<f32>) {
  // expected-error@+1 {{'meta.server_step' op expects f32 or f64 parameters, got 'bf16'}}
  %p:3 = meta.server_step #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> params(%w : tensor<4xbf16>) grads(%w : tensor<4xbf16>) loss(%l : tensor<f32>) {servers = 1 : i64, staleness = 0 : i64}
  return
}
// -----
func.func @f(%w: tensor<4xf32>, %l: tensor<f32>) {
  // expected-error@+1 {{'meta.server_step' op is asynchronous or has a staleness bound, not both}}
  %p:3 = meta.server_step #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> params(%w : tensor<4xf32>) grads(%w : tensor<4xf32>) loss(%l : tensor<f32>) {asynchronous, servers = 1 : i64, staleness = 2 : i64}
  return
}
// -----
func.func @f(%w: tensor<4xf32>, %l: tensor<f32>) {
  // expected-error@+1 {{'meta.server_step' op clips gradients only with its guard ('guarded')}}
  %p:3 = meta.server_step #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> params(%w : tensor<4xf32>) grads(%w : tensor<4xf32>) loss(%l : tensor<f32>) {clip_norm = 1.0 : f64, servers = 1 : i64, staleness = 0 : i64}
  return
}
// -----
func.func @f(%w: tensor<4xf32>, %l: tensor<f32>) {
  // expected-error@+1 {{'meta.server_step' op attribute 'servers' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %p:3 = meta.server_step #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> params(%w : tensor<4xf32>) grads(%w : tensor<4xf32>) loss(%l : tensor<f32>) {servers = 0 : i64, staleness = 0 : i64}
  return
}
// -----
func.func @f(%l: tensor<f32>) {
  // expected-error@+1 {{'meta.server_step' op expects at least one parameter}}
  %p:2 = "meta.server_step"(%l) <{optimizer = #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00>, operandSegmentSizes = array<i32: 0, 0, 1>, servers = 1 : i64, staleness = 0 : i64}> : (tensor<f32>) -> (tensor<f32>, tensor<0xf64>)
  return
}
