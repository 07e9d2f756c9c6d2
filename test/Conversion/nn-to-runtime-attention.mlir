// RUN: metac-opt %s --convert-nn-to-runtime | FileCheck %s
// RUN: metac-opt %s --convert-nn-to-runtime | grep -c "llvm.call @metart_nn_attention_backward" | FileCheck %s --check-prefix=BACKWARD
// RUN: metac-opt %s --convert-nn-to-runtime | grep -c "llvm.call @metart_nn_attention_double_backward" | FileCheck %s --check-prefix=SECOND

// The derivative ops of one attention that share their operands become one
// runtime call: the three backward ops one call, a duplicate (as CSE would
// have merged) a call of its own; the three double-backward ops of one
// cotangent one call, with that cotangent in gv's place.
// BACKWARD: 2
// SECOND: 1
// CHECK-LABEL: llvm.func @train.step
// CHECK: llvm.call @metart_nn_attention_backward
// CHECK: llvm.call @metart_nn_attention_backward
// CHECK: llvm.call @metart_nn_attention_double_backward
meta.tasks @t "sinusoid" support 4 query 4 : tensor<1xf64> -> tensor<1xf64> config {}
func.func @m(%w: tensor<1x1xf64> {meta.param = "w"}, %x: tensor<1xf64>) -> tensor<1xf64> {
  %y = nn.linear %x, %w : tensor<1xf64>, tensor<1x1xf64> -> tensor<1xf64>
  return %y : tensor<1xf64>
}
meta.train @train model @m tasks @t loss <mse> algorithm #meta.maml<steps = 1, inner_lr = 0.1, order = 2> optimizer #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0> attributes {iterations = 1 : i64, meta_batch = 1 : i64, seed = 0 : i64, meta.step = @train.step} {
}
func.func @train.step(%w: tensor<3x4xf64>, %x: tensor<3x4xf64>, %y: tensor<3x4xf64>) -> (tensor<3x4xf64>, tensor<f64>) {
  %dq = nn.attention_backward %x, %x, %x, %y scale 5.000000e-01 causal wrt "query" : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %dk = nn.attention_backward %x, %x, %x, %y scale 5.000000e-01 causal wrt "key" : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %dv = nn.attention_backward %x, %x, %x, %y scale 5.000000e-01 causal wrt "value" : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %again = nn.attention_backward %x, %x, %x, %y scale 5.000000e-01 causal wrt "query" : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %gq = nn.attention_double_backward %x, %x, %x, %y, %w scale 5.000000e-01 causal from "value" wrt "query" : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %gk = nn.attention_double_backward %x, %x, %x, %y, %w scale 5.000000e-01 causal from "value" wrt "key" : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %gy = nn.attention_double_backward %x, %x, %x, %y, %w scale 5.000000e-01 causal from "value" wrt "grad" : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %s0 = nn.add %dq, %dk : tensor<3x4xf64>
  %s1 = nn.add %s0, %dv : tensor<3x4xf64>
  %s2 = nn.add %s1, %again : tensor<3x4xf64>
  %s3 = nn.add %s2, %gq : tensor<3x4xf64>
  %s4 = nn.add %s3, %gk : tensor<3x4xf64>
  %s5 = nn.add %s4, %gy : tensor<3x4xf64>
  %l = nn.mse_loss %x, %y : tensor<3x4xf64>, tensor<3x4xf64> -> tensor<f64>
  %n = meta.outer_step #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0> params(%w : tensor<3x4xf64>) grads(%s5 : tensor<3x4xf64>) state()
  return %n, %l : tensor<3x4xf64>, tensor<f64>
}
