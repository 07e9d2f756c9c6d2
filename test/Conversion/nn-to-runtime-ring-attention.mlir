// RUN: metac-opt %s --convert-nn-to-runtime | FileCheck %s
// RUN: metac-opt %s | metac-opt | FileCheck %s --check-prefix=ROUND

// Ring attention (partitioning's `ring_axes`, here the sequence axis, mask
// 1 << 5 = 32) calls the ring entry points with the axes' mask after
// `causal`; the backward's three ops and the double backward's ops of one
// cotangent still share one call each.
// ROUND: nn.attention %{{.*}} scale 5.000000e-01 causal {ring_axes = array<i16: 5>}
// CHECK-LABEL: llvm.func @train.step
// CHECK: %[[MASK:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK: llvm.call @metart_nn_ring_attention(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MASK]], %{{.*}})
// CHECK: llvm.call @metart_nn_ring_attention_backward(
// CHECK-NOT: llvm.call @metart_nn_ring_attention_backward(
// CHECK: llvm.call @metart_nn_ring_attention_double_backward(
// CHECK-NOT: llvm.call @metart_nn_attention
meta.tasks @t "sinusoid" support 4 query 4 : tensor<1xf64> -> tensor<1xf64> config {}
func.func @m(%w: tensor<1x1xf64> {meta.param = "w"}, %x: tensor<1xf64>) -> tensor<1xf64> {
  %y = nn.linear %x, %w : tensor<1xf64>, tensor<1x1xf64> -> tensor<1xf64>
  return %y : tensor<1xf64>
}
meta.train @train model @m tasks @t loss <mse> algorithm #meta.maml<steps = 1, inner_lr = 0.1, order = 2> optimizer #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0> attributes {iterations = 1 : i64, meta_batch = 1 : i64, seed = 0 : i64, meta.step = @train.step} {
}
func.func @train.step(%w: tensor<3x4xf64>, %x: tensor<3x4xf64>, %y: tensor<3x4xf64>) -> (tensor<3x4xf64>, tensor<f64>) {
  %a = nn.attention %x, %x, %y scale 5.000000e-01 causal {ring_axes = array<i16: 5>} : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %dq = nn.attention_backward %x, %x, %x, %y scale 5.000000e-01 causal wrt "query" {ring_axes = array<i16: 5>} : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %dk = nn.attention_backward %x, %x, %x, %y scale 5.000000e-01 causal wrt "key" {ring_axes = array<i16: 5>} : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %dv = nn.attention_backward %x, %x, %x, %y scale 5.000000e-01 causal wrt "value" {ring_axes = array<i16: 5>} : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %gq = nn.attention_double_backward %x, %x, %x, %y, %w scale 5.000000e-01 causal from "value" wrt "query" {ring_axes = array<i16: 5>} : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %gy = nn.attention_double_backward %x, %x, %x, %y, %w scale 5.000000e-01 causal from "value" wrt "grad" {ring_axes = array<i16: 5>} : tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf64>
  %s0 = nn.add %dq, %dk : tensor<3x4xf64>
  %s1 = nn.add %s0, %dv : tensor<3x4xf64>
  %s2 = nn.add %s1, %gq : tensor<3x4xf64>
  %s3 = nn.add %s2, %gy : tensor<3x4xf64>
  %s4 = nn.add %s3, %a : tensor<3x4xf64>
  %l = nn.mse_loss %x, %y : tensor<3x4xf64>, tensor<3x4xf64> -> tensor<f64>
  %n = meta.outer_step #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0> params(%w : tensor<3x4xf64>) grads(%s4 : tensor<3x4xf64>) state()
  return %n, %l : tensor<3x4xf64>, tensor<f64>
}
