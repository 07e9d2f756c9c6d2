// RUN: metac-opt %s --meta-autodiff --canonicalize --split-input-file -verify-diagnostics | FileCheck %s

// First order: the body is inlined, then the reverse sweep of mse, tanh and
// linear (weight and bias only: x and y are captured constants).
// CHECK-LABEL: func.func @linear_tanh_mse
// CHECK-SAME: (%[[W:.*]]: tensor<3x2xf64>, %[[B:.*]]: tensor<3xf64>, %[[X:.*]]: tensor<5x2xf64>, %[[Y:.*]]: tensor<5x3xf64>)
// CHECK:      %[[H:.*]] = nn.linear %[[X]], %[[W]], %[[B]]
// CHECK:      %[[T:.*]] = nn.tanh %[[H]]
// CHECK:      %[[L:.*]] = nn.mse_loss %[[T]], %[[Y]]
// CHECK:      %[[DIFF:.*]] = nn.sub %[[T]], %[[Y]]
// CHECK:      %[[DL:.*]] = nn.broadcast
// CHECK:      %[[S:.*]] = nn.scale %[[DIFF]] by 0.13333333333333333
// CHECK:      %[[DT:.*]] = nn.mul %[[DL]], %[[S]]
// CHECK:      %[[DH:.*]] = nn.sub %[[DT]], %{{.*}}
// CHECK:      %[[DW:.*]] = nn.matmul %[[DH]], %[[X]] {transpose_lhs} : tensor<5x3xf64>, tensor<5x2xf64> -> tensor<3x2xf64>
// CHECK:      %[[DB:.*]] = nn.reduce_sum %[[DH]] dims [0] : tensor<5x3xf64> -> tensor<3xf64>
// CHECK:      return %[[L]], %[[DW]], %[[DB]]
func.func @linear_tanh_mse(%w: tensor<3x2xf64>, %b: tensor<3xf64>, %x: tensor<5x2xf64>, %y: tensor<5x3xf64>)
    -> (tensor<f64>, tensor<3x2xf64>, tensor<3xf64>) {
  %l, %g:2 = meta.grad(%w, %b) : (tensor<3x2xf64>, tensor<3xf64>) -> (tensor<f64>, tensor<3x2xf64>, tensor<3xf64>) {
  ^bb0(%pw: tensor<3x2xf64>, %pb: tensor<3xf64>):
    %h = nn.linear %x, %pw, %pb : tensor<5x2xf64>, tensor<3x2xf64>, tensor<3xf64> -> tensor<5x3xf64>
    %t = nn.tanh %h : tensor<5x3xf64>
    %loss = nn.mse_loss %t, %y : tensor<5x3xf64>, tensor<5x3xf64> -> tensor<f64>
    meta.yield %loss : tensor<f64>
  }
  return %l, %g#0, %g#1 : tensor<f64>, tensor<3x2xf64>, tensor<3xf64>
}

// -----

// A Hessian-vector product: the outer request differentiates the inner
// request's reverse sweep, so no meta.grad is left and the result depends
// on second derivatives (the derivative of tanh's derivative multiplies t).
// CHECK-LABEL: func.func @hessian_vector_product
// CHECK-NOT: meta.grad
// CHECK: nn.tanh
// CHECK: return
func.func @hessian_vector_product(%x: tensor<4xf64>, %v: tensor<4xf64>) -> tensor<4xf64> {
  %l, %hv = meta.grad(%x) : (tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>) {
  ^bb0(%p: tensor<4xf64>):
    %inner, %g = meta.grad(%p) : (tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>) {
    ^bb0(%q: tensor<4xf64>):
      %t = nn.tanh %q : tensor<4xf64>
      %s = nn.reduce_sum %t dims [0] : tensor<4xf64> -> tensor<f64>
      meta.yield %s : tensor<f64>
    }
    %gv = nn.mul %g, %v : tensor<4xf64>
    %d = nn.reduce_sum %gv dims [0] : tensor<4xf64> -> tensor<f64>
    meta.yield %d : tensor<f64>
  }
  return %hv : tensor<4xf64>
}

// -----

// First order: the inner gradient is a constant to the outer request, so the
// gradient of sum(p - g(p)) is all ones (no tanh derivative survives).
// CHECK-LABEL: func.func @first_order
// CHECK-NEXT: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NEXT: %[[G:.*]] = nn.broadcast %[[ONE]] dims [0] : tensor<f64> -> tensor<4xf64>
// CHECK-NEXT: return %[[G]]
func.func @first_order(%x: tensor<4xf64>) -> tensor<4xf64> {
  %l, %gx = meta.grad(%x) : (tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>) {
  ^bb0(%p: tensor<4xf64>):
    %inner, %g = meta.grad(%p) first_order : (tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>) {
    ^bb0(%q: tensor<4xf64>):
      %t = nn.tanh %q : tensor<4xf64>
      %s = nn.reduce_sum %t dims [0] : tensor<4xf64> -> tensor<f64>
      meta.yield %s : tensor<f64>
    }
    %u = nn.sub %p, %g : tensor<4xf64>
    %d = nn.reduce_sum %u dims [0] : tensor<4xf64> -> tensor<f64>
    meta.yield %d : tensor<f64>
  }
  return %gx : tensor<4xf64>
}

// -----

// A loss that does not depend on the inputs has zero gradients.
// CHECK-LABEL: func.func @constant_loss
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %{{.*}}, %[[Z]]
func.func @constant_loss(%x: tensor<3xf32>, %c: tensor<f32>) -> (tensor<f32>, tensor<3xf32>) {
  %l, %g = meta.grad(%x) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    meta.yield %c : tensor<f32>
  }
  return %l, %g : tensor<f32>, tensor<3xf32>
}

// -----

// The same value passed twice gets a gradient for each use.
// CHECK-LABEL: func.func @duplicate_inputs
// CHECK-NOT: meta.grad
func.func @duplicate_inputs(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %l, %g:2 = meta.grad(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %m = nn.mul %a, %b : tensor<3xf32>
    %s = nn.reduce_sum %m dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s : tensor<f32>
  }
  return %g#0, %g#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

func.func private @opaque(tensor<3xf32>) -> tensor<3xf32>

func.func @not_differentiable(%x: tensor<3xf32>) -> tensor<3xf32> {
  %l, %g = meta.grad(%x) : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  ^bb0(%p: tensor<3xf32>):
    // expected-error@+1 {{'func.call' op cannot be differentiated: it has no derivative rule (DifferentiableOpInterface)}}
    %y = func.call @opaque(%p) : (tensor<3xf32>) -> tensor<3xf32>
    %s = nn.reduce_sum %y dims [0] : tensor<3xf32> -> tensor<f32>
    meta.yield %s : tensor<f32>
  }
  return %g : tensor<3xf32>
}
