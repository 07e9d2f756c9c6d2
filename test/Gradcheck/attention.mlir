// nn.attention_backward as a function of its own: its derivative
// (nn.attention_double_backward, evaluated by the interpreter's direct
// formula) against f64 central finite differences, plain and causal, for
// every operand. (Attention's second derivative, which goes through the
// same op, is checked in nn_ops.mlir.) The double backward has no
// derivative of its own: a third derivative is refused by name.
// RUN: metac-gradcheck %s --order=1 | FileCheck %s
// RUN: metac-gradcheck %s --order=1 --seed=7 | FileCheck %s
// RUN: not metac-gradcheck %s --order=2 2>&1 | FileCheck %s --check-prefix=THIRD
// THIRD: error: 'nn.attention_double_backward' op has no derivative: a third derivative through fused attention needs `fused = false`

// CHECK: @attention_backward: order 1 {{.*}} ok
func.func @attention_backward(%q: tensor<2x3x4xf64>, %k: tensor<2x5x4xf64>, %v: tensor<2x5x3xf64>, %g: tensor<2x3x3xf64>, %c: tensor<2x4x4xf64>, %h: tensor<2x4x4xf64>) -> (tensor<2x3x4xf64>, tensor<2x5x4xf64>, tensor<2x5x3xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>) {
  %0 = nn.attention_backward %q, %k, %v, %g scale 7.000000e-01 wrt "query" : tensor<2x3x4xf64>, tensor<2x5x4xf64>, tensor<2x5x3xf64>, tensor<2x3x3xf64> -> tensor<2x3x4xf64>
  %1 = nn.attention_backward %q, %k, %v, %g scale 7.000000e-01 wrt "key" : tensor<2x3x4xf64>, tensor<2x5x4xf64>, tensor<2x5x3xf64>, tensor<2x3x3xf64> -> tensor<2x5x4xf64>
  %2 = nn.attention_backward %q, %k, %v, %g scale 7.000000e-01 wrt "value" : tensor<2x3x4xf64>, tensor<2x5x4xf64>, tensor<2x5x3xf64>, tensor<2x3x3xf64> -> tensor<2x5x3xf64>
  %3 = nn.attention_backward %c, %c, %c, %h scale 1.300000e+00 causal wrt "query" : tensor<2x4x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64> -> tensor<2x4x4xf64>
  %4 = nn.attention_backward %c, %c, %c, %h scale 1.300000e+00 causal wrt "key" : tensor<2x4x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64> -> tensor<2x4x4xf64>
  %5 = nn.tanh %0 : tensor<2x3x4xf64>
  return %5, %1, %2, %3, %4 : tensor<2x3x4xf64>, tensor<2x5x4xf64>, tensor<2x5x3xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64>
}

