// RUN: metac-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the meta ops and attributes: regions.

func.func @f() {
  // expected-error@+1 {{'meta.task_batch' op result #0 must be statically shaped tensor, but got 'tensor<?x1xf32>'}}
  %sx, %sy, %qx, %qy = meta.task_batch @sine : tensor<?x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<5x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// meta.grad
//===----------------------------------------------------------------------===//
// -----
func.func @f() -> tensor<f32> {
  // expected-error@+1 {{'meta.grad' op expects at least one input to differentiate}}
  %v = meta.grad() : () -> tensor<f32> {
    %c = arith.constant dense<1.0> : tensor<f32>
    meta.yield %c : tensor<f32>
  }
  return %v : tensor<f32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body takes 2 arguments but the op has 1 inputs}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>, %q: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body argument 0 has type 'tensor<3xf64>' but input 0 has type 'tensor<3xf32>'}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf64>):
    %l = arith.constant dense<1.0> : tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body must end with meta.yield}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    func.return %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}
// -----
// A body without a terminator.
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body must end with meta.yield}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
  }
  return %g : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<f32> {
  // expected-error@+1 {{'meta.grad' op expects one gradient per input, got 0 for 1}}
  %v = meta.grad(%w) : (tensor<3xf32>) -> tensor<f32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %v : tensor<f32>
}
// -----
func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op gradient 1 has type 'tensor<3xf32>' but input 1 has type 'tensor<2xf32>'}}
  %v, %g:2 = meta.grad(%w, %b) : (tensor<3xf32>, tensor<2xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>, %q: tensor<2xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g#0 : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op value type 'tensor<f64>' does not match the yielded loss type 'tensor<f32>'}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f64>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op result #0 must be 0-d float tensor, but got 'tensor<1xf32>'}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<1xf32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %g : tensor<3xf32>
}
// -----
// The adaptation body yields one 0-d float loss.
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op body must yield a 0-d float loss, got 'tensor<3xf32>'}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    meta.yield %p : tensor<3xf32>
  }
  return %a : tensor<3xf32>
}
// -----
// The value has the yielded loss's type.
func.func @f(%w: tensor<3xf32>, %c: tensor<f64>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op value type 'tensor<f32>' does not match the yielded loss type 'tensor<f64>'}}
  %v, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    meta.yield %c : tensor<f64>
  }
  return %g : tensor<3xf32>
}
// -----
func.func @f(%l: tensor<f32>) {
  // expected-error@+1 {{'meta.yield' op expects parent op to be one of 'meta.grad, meta.adapt, meta.map'}}
  meta.yield %l : tensor<f32>
}

//===----------------------------------------------------------------------===//
// meta.adapt
//===----------------------------------------------------------------------===//
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects steps >= 1, got 0}}
  %a = meta.adapt(%w) steps 0 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects steps >= 1, got -5}}
  %a = meta.adapt(%w) steps -5 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects inner_lr > 0}}
  %a = meta.adapt(%w) steps 1 inner_lr -0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects order 1 or 2, got 3}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 3 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}
// -----
func.func @f() {
  // expected-error@+1 {{'meta.adapt' op expects at least one parameter to adapt}}
  meta.adapt() steps 1 inner_lr 0.1 order 1 : () -> () {
    %l = arith.constant dense<1.0> : tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf64> {
  // expected-error@+1 {{'meta.adapt' op results must have the types of the parameters}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf64> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf64>
}
// -----
func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op results must have the types of the parameters}}
  %a = meta.adapt(%w, %b) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>, tensor<2xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>, %q: tensor<2xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op body takes 0 arguments but the op has 1 inputs}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
    %l = arith.constant dense<1.0> : tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  // expected-error@+1 {{'meta.adapt' op body argument 1 has type 'tensor<3xf32>' but input 1 has type 'tensor<2xf32>'}}
  %a:2 = meta.adapt(%w, %b) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>, tensor<2xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  ^bb0(%p: tensor<3xf32>, %q: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %l : tensor<f32>
  }
  return %a#0, %a#1 : tensor<3xf32>, tensor<2xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op body must end with meta.yield}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
    %l = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
  }
  return %a : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.adapt' op expects a non-empty block}}
  %a = meta.adapt(%w) steps 1 inner_lr 0.1 order 2 : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%p: tensor<3xf32>):
  }
  return %a : tensor<3xf32>
}

//===----------------------------------------------------------------------===//
// meta.outer_step
//===----------------------------------------------------------------------===//
// -----
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf64>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op expects one gradient of each parameter's type}}
  %p = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf64>) state()
  return %p : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op expects one gradient of each parameter's type}}
  %p = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g, %g : tensor<3xf32>, tensor<3xf32>) state()
  return %p : tensor<3xf32>
}
// -----
// The result types are inferred from the parameters and the state.
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{'meta.outer_step' op failed to infer returned types}}
  // expected-error@+1 {{'meta.outer_step' op inferred type(s) 'tensor<3xf32>' are incompatible with return type(s) of operation 'tensor<2xf32>'}}
  %p = "meta.outer_step"(%w, %g) <{optimizer = #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>, operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<3xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %p : tensor<2xf32>
}
// -----
func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>, %gw: tensor<3xf32>, %gb: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op optimizer #meta.sgd<lr = 1.000000e-01, momentum = 9.000000e-01, weight_decay = 0.000000e+00> expects 2 state tensors for 2 parameters, got 0}}
  %p:2 = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.9, weight_decay = 0.0>
      params(%w, %b : tensor<3xf32>, tensor<2xf32>) grads(%gw, %gb : tensor<3xf32>, tensor<2xf32>) state()
  return %p#0 : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>, %m: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op optimizer #meta.sgd<lr = 1.000000e-01, momentum = 0.000000e+00, weight_decay = 0.000000e+00> expects 0 state tensors for 1 parameters, got 1}}
  %p:2 = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state(%m : tensor<3xf32>)
  return %p#0 : tensor<3xf32>
}
// -----
// Adam without its step count.
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op optimizer #meta.adam<lr = 1.000000e-03, beta1 = 9.000000e-01, beta2 = 0.99899999999999999, eps = 1.000000e-08, weight_decay = 0.000000e+00> expects 3 state tensors for 1 parameters, got 2}}
  %p:3 = meta.outer_step #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state(%m, %v : tensor<3xf32>, tensor<3xf32>)
  return %p#0 : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>, %gw: tensor<3xf32>, %gb: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op state tensor 1 must have the type of parameter 1}}
  %p:4 = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.9, weight_decay = 0.0>
      params(%w, %b : tensor<3xf32>, tensor<2xf32>) grads(%gw, %gb : tensor<3xf32>, tensor<2xf32>) state(%gw, %gw : tensor<3xf32>, tensor<3xf32>)
  return %p#0 : tensor<3xf32>
}
// -----
// The second moments (state 2 and 3) come after the first moments.
func.func @f(%w: tensor<3xf32>, %b: tensor<2xf32>, %gw: tensor<3xf32>, %gb: tensor<2xf32>, %n: tensor<i64>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op state tensor 2 must have the type of parameter 0}}
  %p:7 = meta.outer_step #meta.adamw<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.01>
      params(%w, %b : tensor<3xf32>, tensor<2xf32>) grads(%gw, %gb : tensor<3xf32>, tensor<2xf32>) state(%gw, %gb, %gb, %gw, %n : tensor<3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>, tensor<i64>)
  return %p#0 : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>, %n: tensor<i32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op the last state tensor is the step count and must be tensor<i64>}}
  %p:4 = meta.outer_step #meta.adam<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state(%g, %g, %n : tensor<3xf32>, tensor<3xf32>, tensor<i32>)
  return %p#0 : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>, %n: tensor<1xi64>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op the last state tensor is the step count and must be tensor<i64>}}
  %p:4 = meta.outer_step #meta.adamw<lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.0>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state(%g, %g, %n : tensor<3xf32>, tensor<3xf32>, tensor<1xi64>)
  return %p#0 : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>, %g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.outer_step' op attribute 'optimizer' failed to satisfy constraint}}
  %p = meta.outer_step #meta.maml<steps = 1, inner_lr = 0.1, order = 1>
      params(%w : tensor<3xf32>) grads(%g : tensor<3xf32>) state()
  return %p : tensor<3xf32>
}
// -----
func.func @f(%w: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'meta.grad' op body must yield exactly one loss, got 2 values}}
  %l, %g = meta.grad(%w) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    %s = nn.reduce_sum %p dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s, %s : tensor<f32>, tensor<f32>
  }
  return %g : tensor<3xf32>
}
// -----
func.func @f(%x: tensor<4x3xf32>, %y: tensor<5x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'meta.map' op mapped operands disagree on the number of tasks: 4 and 5}}
  %r = meta.map(%x, %y : tensor<4x3xf32>, tensor<5x3xf32>) shared() -> tensor<4xf32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %s = nn.reduce_sum %a dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s : tensor<f32>
  }
  return %r : tensor<4xf32>
}
// -----
func.func @f(%x: tensor<f32>) -> tensor<4xf32> {
  // expected-error@+1 {{'meta.map' op mapped operands need a leading task dimension, got 'tensor<f32>'}}
  %r = meta.map(%x : tensor<f32>) shared() -> tensor<4xf32> {
  ^bb0(%a: tensor<f32>):
    meta.yield %a : tensor<f32>
  }
  return %r : tensor<4xf32>
}
// -----
func.func @f(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'meta.map' op body arguments must be one task's slice of each mapped operand, then the shared operands}}
  %r = meta.map(%x : tensor<4x3xf32>) shared() -> tensor<4xf32> {
  ^bb0(%a: tensor<4x3xf32>):
    %s = nn.reduce_sum %a dims [0, 1] : tensor<4x3xf32> -> tensor<f32>
    meta.yield %s : tensor<f32>
  }
  return %r : tensor<4xf32>
}
// -----
func.func @f(%x: tensor<4x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'meta.map' op body yields 2 values for 1 results}}
  %r = meta.map(%x : tensor<4x3xf32>) shared() -> tensor<4xf32> {
  ^bb0(%a: tensor<3xf32>):
    %s = nn.reduce_sum %a dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s, %s : tensor<f32>, tensor<f32>
  }
  return %r : tensor<4xf32>
}
// -----
func.func @f(%x: tensor<4x3xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{'meta.map' op result type 'tensor<5xf32>' is not the yielded type 'tensor<f32>' stacked over 4 tasks}}
  %r = meta.map(%x : tensor<4x3xf32>) shared() -> tensor<5xf32> {
  ^bb0(%a: tensor<3xf32>):
    %s = nn.reduce_sum %a dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s : tensor<f32>
  }
  return %r : tensor<5xf32>
}
