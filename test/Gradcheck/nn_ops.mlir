// Every nn op's VJP, and the VJP of its VJP, against central finite
// differences in f64 on the reference interpreter (metac-gradcheck builds
// L = <W, f(x)> and H = <V, dL/dx> and differentiates both). The
// stop-gradient op deliberately disagrees with finite differences; its
// effect is tested in test/Transforms/autodiff*.mlir.
// RUN: metac-gradcheck %s --order=2 | FileCheck %s
// RUN: metac-gradcheck %s --order=2 --seed=7 | FileCheck %s

// CHECK-DAG: @unary: order 1 {{.*}} ok
func.func @unary(%x: tensor<2x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>) {
  %0 = nn.neg %x : tensor<2x3xf64>
  %1 = nn.exp %x : tensor<2x3xf64>
  %2 = nn.erf %x : tensor<2x3xf64>
  %3 = nn.tanh %x : tensor<2x3xf64>
  %4 = nn.sigmoid %x : tensor<2x3xf64>
  %5 = nn.gelu %x : tensor<2x3xf64>
  %6 = nn.scale %x by -2.5 : tensor<2x3xf64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>
}

// CHECK-DAG: @positive: order 1 {{.*}} ok
func.func @positive(%x: tensor<5xf64> {metac.eval.min = 0.5 : f64, metac.eval.max = 2.0 : f64}) -> (tensor<5xf64>, tensor<5xf64>, tensor<5xf64>) {
  %0 = nn.log %x : tensor<5xf64>
  %1 = nn.sqrt %x : tensor<5xf64>
  %2 = nn.rsqrt %x : tensor<5xf64>
  return %0, %1, %2 : tensor<5xf64>, tensor<5xf64>, tensor<5xf64>
}

// relu and step are piecewise linear; random inputs avoid the kink.
// CHECK-DAG: @relu: order 1 {{.*}} ok
func.func @relu(%x: tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>) {
  %0 = nn.relu %x : tensor<4x4xf64>
  %1 = nn.step %x : tensor<4x4xf64>
  %2 = nn.mul %0, %x : tensor<4x4xf64>
  return %2, %1 : tensor<4x4xf64>, tensor<4x4xf64>
}

// CHECK-DAG: @binary: order 1 {{.*}} ok
func.func @binary(%a: tensor<3x2xf64>, %b: tensor<3x2xf64> {metac.eval.min = 0.5 : f64, metac.eval.max = 1.5 : f64}) -> (tensor<3x2xf64>, tensor<3x2xf64>, tensor<3x2xf64>, tensor<3x2xf64>) {
  %0 = nn.add %a, %b : tensor<3x2xf64>
  %1 = nn.sub %a, %b : tensor<3x2xf64>
  %2 = nn.mul %a, %b : tensor<3x2xf64>
  %3 = nn.div %a, %b : tensor<3x2xf64>
  return %0, %1, %2, %3 : tensor<3x2xf64>, tensor<3x2xf64>, tensor<3x2xf64>, tensor<3x2xf64>
}

// CHECK-DAG: @linear: order 1 {{.*}} ok
func.func @linear(%x: tensor<2x3x4xf64>, %w: tensor<5x4xf64>, %b: tensor<5xf64>) -> tensor<2x3x5xf64> {
  %0 = nn.linear %x, %w, %b : tensor<2x3x4xf64>, tensor<5x4xf64>, tensor<5xf64> -> tensor<2x3x5xf64>
  %1 = nn.tanh %0 : tensor<2x3x5xf64>
  return %1 : tensor<2x3x5xf64>
}

// Per-task weights, no bias.
// CHECK-DAG: @linear_batched: order 1 {{.*}} ok
func.func @linear_batched(%x: tensor<2x3x4xf64>, %w: tensor<2x5x4xf64>) -> tensor<2x3x5xf64> {
  %0 = nn.linear %x, %w : tensor<2x3x4xf64>, tensor<2x5x4xf64> -> tensor<2x3x5xf64>
  %1 = nn.tanh %0 : tensor<2x3x5xf64>
  return %1 : tensor<2x3x5xf64>
}

// Fused attention: its derivative (nn.attention_backward) and the
// derivative of that (nn.attention_double_backward), plain and causal;
// the backward as a function of its own in attention.mlir.
// CHECK-DAG: @attention: order 1 {{.*}}; order 2 {{.*}} ok
func.func @attention(%q: tensor<2x3x4xf64>, %k: tensor<2x5x4xf64>, %v: tensor<2x5x3xf64>, %c: tensor<2x4x4xf64>) -> (tensor<2x3x3xf64>, tensor<2x4x4xf64>) {
  %0 = nn.attention %q, %k, %v scale 7.000000e-01 : tensor<2x3x4xf64>, tensor<2x5x4xf64>, tensor<2x5x3xf64> -> tensor<2x3x3xf64>
  %1 = nn.attention %c, %c, %c scale 1.300000e+00 causal : tensor<2x4x4xf64>, tensor<2x4x4xf64>, tensor<2x4x4xf64> -> tensor<2x4x4xf64>
  return %0, %1 : tensor<2x3x3xf64>, tensor<2x4x4xf64>
}

// CHECK-DAG: @matmul: order 1 {{.*}} ok
func.func @matmul(%a: tensor<2x3x4xf64>, %b: tensor<2x4x5xf64>, %c: tensor<2x4x3xf64>, %d: tensor<2x5x4xf64>)
    -> (tensor<2x3x5xf64>, tensor<2x3x5xf64>, tensor<2x3x5xf64>, tensor<2x3x5xf64>) {
  %0 = nn.matmul %a, %b : tensor<2x3x4xf64>, tensor<2x4x5xf64> -> tensor<2x3x5xf64>
  %1 = nn.matmul %c, %b {transpose_lhs} : tensor<2x4x3xf64>, tensor<2x4x5xf64> -> tensor<2x3x5xf64>
  %2 = nn.matmul %a, %d {transpose_rhs} : tensor<2x3x4xf64>, tensor<2x5x4xf64> -> tensor<2x3x5xf64>
  %3 = nn.matmul %c, %d {transpose_lhs, transpose_rhs} : tensor<2x4x3xf64>, tensor<2x5x4xf64> -> tensor<2x3x5xf64>
  %4 = nn.tanh %0 : tensor<2x3x5xf64>
  return %4, %1, %2, %3 : tensor<2x3x5xf64>, tensor<2x3x5xf64>, tensor<2x3x5xf64>, tensor<2x3x5xf64>
}

// CHECK-DAG: @conv2d: order 1 {{.*}} ok
func.func @conv2d(%x: tensor<2x2x5x5xf64>, %w: tensor<3x2x3x3xf64>, %b: tensor<3xf64>) -> tensor<2x3x3x3xf64> {
  %0 = nn.conv2d %x, %w, %b stride [2, 2] padding [1, 1] : tensor<2x2x5x5xf64>, tensor<3x2x3x3xf64>, tensor<3xf64> -> tensor<2x3x3x3xf64>
  %1 = nn.tanh %0 : tensor<2x3x3x3xf64>
  return %1 : tensor<2x3x3x3xf64>
}

// CHECK-DAG: @conv2d_batched: order 1 {{.*}} ok
func.func @conv2d_batched(%x: tensor<2x1x2x4x4xf64>, %w: tensor<2x3x2x2x2xf64>, %b: tensor<2x3xf64>) -> tensor<2x1x3x3x3xf64> {
  %0 = nn.conv2d %x, %w, %b stride [1, 1] padding [0, 0] : tensor<2x1x2x4x4xf64>, tensor<2x3x2x2x2xf64>, tensor<2x3xf64> -> tensor<2x1x3x3x3xf64>
  %1 = nn.sigmoid %0 : tensor<2x1x3x3x3xf64>
  return %1 : tensor<2x1x3x3x3xf64>
}

// The derivative ops, differentiated as functions of their own.
// CHECK-DAG: @conv2d_backward: order 1 {{.*}} ok
func.func @conv2d_backward(%x: tensor<1x2x5x5xf64>, %w: tensor<3x2x3x3xf64>, %g: tensor<1x3x3x3xf64>) -> (tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>) {
  %0 = nn.conv2d_backward_input %g, %w stride [2, 2] padding [1, 1] : tensor<1x3x3x3xf64>, tensor<3x2x3x3xf64> -> tensor<1x2x5x5xf64>
  %1 = nn.conv2d_backward_weight %x, %g stride [2, 2] padding [1, 1] : tensor<1x2x5x5xf64>, tensor<1x3x3x3xf64> -> tensor<3x2x3x3xf64>
  %2 = nn.tanh %0 : tensor<1x2x5x5xf64>
  %3 = nn.tanh %1 : tensor<3x2x3x3xf64>
  return %2, %3 : tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>
}

// CHECK-DAG: @pooling: order 1 {{.*}} ok
func.func @pooling(%x: tensor<2x4x4xf64>) -> (tensor<2x2x2xf64>, tensor<2x2x2xf64>, tensor<2x3x3xf64>) {
  %0 = nn.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x4x4xf64> -> tensor<2x2x2xf64>
  %1 = nn.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x4x4xf64> -> tensor<2x2x2xf64>
  %2 = nn.max_pool2d %x kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x4x4xf64> -> tensor<2x4x4xf64>
  %3 = nn.avg_pool2d %2 kernel [2, 2] stride [1, 1] padding [0, 0] : tensor<2x4x4xf64> -> tensor<2x3x3xf64>
  %4 = nn.mul %0, %0 : tensor<2x2x2xf64>
  %5 = nn.mul %3, %3 : tensor<2x3x3xf64>
  return %4, %1, %5 : tensor<2x2x2xf64>, tensor<2x2x2xf64>, tensor<2x3x3xf64>
}

// CHECK-DAG: @pooling_backward: order 1 {{.*}} ok
func.func @pooling_backward(%x: tensor<2x4x4xf64>, %g: tensor<2x2x2xf64>, %s: tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x2x2xf64>, tensor<2x4x4xf64>) {
  %0 = nn.max_pool2d_backward %x, %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x4x4xf64>, tensor<2x2x2xf64> -> tensor<2x4x4xf64>
  %1 = nn.max_pool2d_gather %x, %s kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x4x4xf64>, tensor<2x4x4xf64> -> tensor<2x2x2xf64>
  %2 = nn.avg_pool2d_backward %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x2x2xf64> -> tensor<2x4x4xf64>
  %3 = nn.mul %0, %0 : tensor<2x4x4xf64>
  %4 = nn.mul %1, %1 : tensor<2x2x2xf64>
  %5 = nn.mul %2, %2 : tensor<2x4x4xf64>
  return %3, %4, %5 : tensor<2x4x4xf64>, tensor<2x2x2xf64>, tensor<2x4x4xf64>
}

// CHECK-DAG: @batch_norm: order 1 {{.*}} ok
func.func @batch_norm(%x: tensor<4x3x2x2xf64>, %w: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<4x3x2x2xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 1 reduce [0, 2, 3] epsilon 1.0e-5 : tensor<4x3x2x2xf64>, tensor<3xf64>, tensor<3xf64> -> tensor<4x3x2x2xf64>
  %1 = nn.tanh %0 : tensor<4x3x2x2xf64>
  return %1 : tensor<4x3x2x2xf64>
}

// Per-task statistics and weights (the batched form).
// CHECK-DAG: @batch_norm_batched: order 1 {{.*}} ok
func.func @batch_norm_batched(%x: tensor<2x3x2x3xf64>, %w: tensor<2x2xf64>, %b: tensor<2x2xf64>) -> tensor<2x3x2x3xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 2 reduce [1, 3] epsilon 1.0e-5 : tensor<2x3x2x3xf64>, tensor<2x2xf64>, tensor<2x2xf64> -> tensor<2x3x2x3xf64>
  %1 = nn.tanh %0 : tensor<2x3x2x3xf64>
  return %1 : tensor<2x3x2x3xf64>
}

// CHECK-DAG: @layer_norm: order 1 {{.*}} ok
func.func @layer_norm(%x: tensor<3x5xf64>, %w: tensor<5xf64>, %b: tensor<5xf64>) -> tensor<3x5xf64> {
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-5 : tensor<3x5xf64>, tensor<5xf64>, tensor<5xf64> -> tensor<3x5xf64>
  %1 = nn.tanh %0 : tensor<3x5xf64>
  return %1 : tensor<3x5xf64>
}

// CHECK-DAG: @softmax: order 1 {{.*}} ok
func.func @softmax(%x: tensor<3x4xf64>) -> (tensor<3x4xf64>, tensor<3x4xf64>) {
  %0 = nn.softmax %x axis 1 : tensor<3x4xf64>
  %1 = nn.log_softmax %x axis 0 : tensor<3x4xf64>
  %2 = nn.mul %1, %1 : tensor<3x4xf64>
  return %0, %2 : tensor<3x4xf64>, tensor<3x4xf64>
}

// CHECK-DAG: @shapes: order 1 {{.*}} ok
func.func @shapes(%x: tensor<2x3x4xf64>, %v: tensor<3xf64>) -> (tensor<6x4xf64>, tensor<4x2x3xf64>, tensor<2x3x4xf64>, tensor<3xf64>, tensor<2x4xf64>) {
  %0 = nn.reshape %x : tensor<2x3x4xf64> -> tensor<6x4xf64>
  %1 = nn.transpose %x [2, 0, 1] : tensor<2x3x4xf64> -> tensor<4x2x3xf64>
  %2 = nn.broadcast %v dims [0, 2] : tensor<3xf64> -> tensor<2x3x4xf64>
  %3 = nn.reduce_sum %x dims [0, 2] : tensor<2x3x4xf64> -> tensor<3xf64>
  %4 = nn.reduce_mean %x dims [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
  %5 = nn.mul %0, %0 : tensor<6x4xf64>
  %6 = nn.mul %2, %x : tensor<2x3x4xf64>
  %7 = nn.mul %3, %3 : tensor<3xf64>
  return %5, %1, %6, %7, %4 : tensor<6x4xf64>, tensor<4x2x3xf64>, tensor<2x3x4xf64>, tensor<3xf64>, tensor<2x4xf64>
}

// CHECK-DAG: @embedding: order 1 {{.*}} ok
func.func @embedding(%ids: tensor<2x3xi64> {metac.eval.max = 5 : i64}, %table: tensor<5x4xf64>, %g: tensor<2x3x4xf64>) -> (tensor<2x3x4xf64>, tensor<5x4xf64>) {
  %0 = nn.embedding %ids, %table : tensor<2x3xi64>, tensor<5x4xf64> -> tensor<2x3x4xf64>
  %1 = nn.embedding_backward %ids, %g : tensor<2x3xi64>, tensor<2x3x4xf64> -> tensor<5x4xf64>
  %2 = nn.mul %0, %0 : tensor<2x3x4xf64>
  %3 = nn.mul %1, %1 : tensor<5x4xf64>
  return %2, %3 : tensor<2x3x4xf64>, tensor<5x4xf64>
}

// CHECK-DAG: @mse_loss: order 1 {{.*}} ok
func.func @mse_loss(%p: tensor<2x5x3xf64>, %t: tensor<2x5x3xf64>) -> (tensor<f64>, tensor<2xf64>) {
  %0 = nn.mse_loss %p, %t : tensor<2x5x3xf64>, tensor<2x5x3xf64> -> tensor<f64>
  %1 = nn.mse_loss %p, %t {batch_rank = 1 : i64} : tensor<2x5x3xf64>, tensor<2x5x3xf64> -> tensor<2xf64>
  return %0, %1 : tensor<f64>, tensor<2xf64>
}

// CHECK-DAG: @cross_entropy: order 1 {{.*}} ok
func.func @cross_entropy(%z: tensor<2x4x3xf64>, %y: tensor<2x4xi64> {metac.eval.max = 3 : i64}) -> (tensor<f64>, tensor<2xf64>, tensor<2x4x3xf64>) {
  %0 = nn.cross_entropy_loss %z, %y : tensor<2x4x3xf64>, tensor<2x4xi64> -> tensor<f64>
  %1 = nn.cross_entropy_loss %z, %y {batch_rank = 1 : i64} : tensor<2x4x3xf64>, tensor<2x4xi64> -> tensor<2xf64>
  %2 = nn.one_hot %y : tensor<2x4xi64> -> tensor<2x4x3xf64>
  %3 = nn.mul %2, %z : tensor<2x4x3xf64>
  return %0, %1, %3 : tensor<f64>, tensor<2xf64>, tensor<2x4x3xf64>
}

// CHECK: {{^}}21 passed, 0 failed
