// RUN: metac-opt %s --meta-autodiff | FileCheck %s

// Without canonicalisation the stop-gradient marks the first-order gradient.
// CHECK-LABEL: func.func @first_order_marker
// CHECK: %[[G:.*]] = nn.stop_gradient %{{.*}} : tensor<4xf64>
// CHECK: return %[[G]]
func.func @first_order_marker(%x: tensor<4xf64>) -> tensor<4xf64> {
  %l, %g = meta.grad(%x) first_order : (tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>) {
  ^bb0(%q: tensor<4xf64>):
    %t = nn.tanh %q : tensor<4xf64>
    %s = nn.reduce_sum %t dims [0] : tensor<4xf64> -> tensor<f64>
    meta.yield %s : tensor<f64>
  }
  return %g : tensor<4xf64>
}
