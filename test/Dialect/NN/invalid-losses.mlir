// RUN: metac-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the nn ops: losses.

func.func @i16_labels(%l: tensor<4x5xf32>, %y: tensor<4xi16>) -> tensor<f32> {
  // expected-error@+1 {{operand #1 must be statically shaped tensor of i32 or i64, but got 'tensor<4xi16>'}}
  %0 = nn.cross_entropy_loss %l, %y : tensor<4x5xf32>, tensor<4xi16> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @dynamic_labels(%l: tensor<4x5xf32>, %y: tensor<?xi64>) -> tensor<f32> {
  // expected-error@+1 {{operand #1 must be statically shaped tensor of i32 or i64, but got 'tensor<?xi64>'}}
  %0 = nn.cross_entropy_loss %l, %y : tensor<4x5xf32>, tensor<?xi64> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @mse_shape(%p: tensor<10x1xf32>, %t: tensor<10xf32>) -> tensor<f32> {
  // expected-error@+1 {{'nn.mse_loss' op prediction shape [10, 1] does not match target shape [10]}}
  %0 = nn.mse_loss %p, %t : tensor<10x1xf32>, tensor<10xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @mse_batch_rank_high(%p: tensor<10x1xf32>, %t: tensor<10x1xf32>) -> tensor<f32> {
  // expected-error@+1 {{'nn.mse_loss' op batch_rank 3 is out of range [0, 2]}}
  %0 = nn.mse_loss %p, %t {batch_rank = 3 : i64} : tensor<10x1xf32>, tensor<10x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @mse_batch_rank_negative(%p: tensor<10x1xf32>, %t: tensor<10x1xf32>) -> tensor<f32> {
  // expected-error@+1 {{'nn.mse_loss' op batch_rank -1 is out of range [0, 2]}}
  %0 = nn.mse_loss %p, %t {batch_rank = -1 : i64} : tensor<10x1xf32>, tensor<10x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @mse_result_shape(%p: tensor<8x10x1xf32>, %t: tensor<8x10x1xf32>) -> tensor<f32> {
  // expected-error@+1 {{'nn.mse_loss' op result shape [] does not match the expected shape [8]}}
  %0 = nn.mse_loss %p, %t {batch_rank = 1 : i64} : tensor<8x10x1xf32>, tensor<8x10x1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @mse_element_type(%p: tensor<10x1xf32>, %t: tensor<10x1xf64>) -> tensor<f32> {
  // expected-error@+1 {{'nn.mse_loss' op operand element type 'f64' does not match result element type 'f32'}}
  %0 = nn.mse_loss %p, %t : tensor<10x1xf32>, tensor<10x1xf64> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @cross_entropy_labels_shape(%l: tensor<25x5xf32>, %y: tensor<5xi64>) -> tensor<f32> {
  // expected-error@+1 {{'nn.cross_entropy_loss' op labels shape [5] is not the logits shape [25, 5] without its class dimension}}
  %0 = nn.cross_entropy_loss %l, %y : tensor<25x5xf32>, tensor<5xi64> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @cross_entropy_rank0_logits(%l: tensor<f32>, %y: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'nn.cross_entropy_loss' op labels shape [] is not the logits shape [] without its class dimension}}
  %0 = nn.cross_entropy_loss %l, %y : tensor<f32>, tensor<i64> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @cross_entropy_batch_rank(%l: tensor<4x25x5xf32>, %y: tensor<4x25xi64>) -> tensor<4x25x5xf32> {
  // expected-error@+1 {{'nn.cross_entropy_loss' op batch_rank 3 is out of range [0, 2]}}
  %0 = nn.cross_entropy_loss %l, %y {batch_rank = 3 : i64} : tensor<4x25x5xf32>, tensor<4x25xi64> -> tensor<4x25x5xf32>
  return %0 : tensor<4x25x5xf32>
}
// -----
func.func @cross_entropy_result_shape(%l: tensor<4x25x5xf32>, %y: tensor<4x25xi64>) -> tensor<f32> {
  // expected-error@+1 {{'nn.cross_entropy_loss' op result shape [] does not match the expected shape [4]}}
  %0 = nn.cross_entropy_loss %l, %y {batch_rank = 1 : i64} : tensor<4x25x5xf32>, tensor<4x25xi64> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @cross_entropy_element_type(%l: tensor<25x5xf16>, %y: tensor<25xi64>) -> tensor<f32> {
  // expected-error@+1 {{'nn.cross_entropy_loss' op operand element type 'f16' does not match result element type 'f32'}}
  %0 = nn.cross_entropy_loss %l, %y : tensor<25x5xf16>, tensor<25xi64> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @one_hot_shape(%labels: tensor<7xi64>) -> tensor<6x5xf32> {
  // expected-error@+1 {{'nn.one_hot' op result shape [6, 5] is not the labels shape [7] plus a class dimension}}
  %0 = nn.one_hot %labels : tensor<7xi64> -> tensor<6x5xf32>
  return %0 : tensor<6x5xf32>
}
// -----
func.func @one_hot_float_labels(%labels: tensor<7xf32>) -> tensor<7x5xf32> {
  // expected-error@+1 {{'nn.one_hot' op operand #0 must be statically shaped tensor of i32 or i64}}
  %0 = nn.one_hot %labels : tensor<7xf32> -> tensor<7x5xf32>
  return %0 : tensor<7x5xf32>
}
// -----
func.func @accuracy_labels_shape(%l: tensor<25x5xf32>, %y: tensor<5xi64>) -> tensor<f32> {
  // expected-error@+1 {{'nn.accuracy' op labels shape [5] is not the logits shape [25, 5] without its class dimension}}
  %0 = nn.accuracy %l, %y : tensor<25x5xf32>, tensor<5xi64> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @accuracy_batch_rank(%l: tensor<4x25x5xf32>, %y: tensor<4x25xi64>) -> tensor<4x25x5xf32> {
  // expected-error@+1 {{'nn.accuracy' op batch_rank 3 is out of range [0, 2]}}
  %0 = nn.accuracy %l, %y {batch_rank = 3 : i64} : tensor<4x25x5xf32>, tensor<4x25xi64> -> tensor<4x25x5xf32>
  return %0 : tensor<4x25x5xf32>
}
// -----
func.func @accuracy_result_shape(%l: tensor<4x25x5xf32>, %y: tensor<4x25xi64>) -> tensor<f32> {
  // expected-error@+1 {{'nn.accuracy' op result shape [] does not match the expected shape [4]}}
  %0 = nn.accuracy %l, %y {batch_rank = 1 : i64} : tensor<4x25x5xf32>, tensor<4x25xi64> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @accuracy_element_type(%l: tensor<4x5xf32>, %y: tensor<4xi64>) -> tensor<f64> {
  // expected-error@+1 {{'nn.accuracy' op operand element type 'f32' does not match result element type 'f64'}}
  %0 = nn.accuracy %l, %y : tensor<4x5xf32>, tensor<4xi64> -> tensor<f64>
  return %0 : tensor<f64>
}
