// RUN: metac-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the nn ops: normalization.

func.func @same_type_softmax(%x: tensor<4x5xf32>) -> tensor<4x5xbf16> {
  // expected-error@+1 {{requires the same type for all operands and results}}
  %0 = "nn.softmax"(%x) {axis = 1 : i64} : (tensor<4x5xf32>) -> tensor<4x5xbf16>
  return %0 : tensor<4x5xbf16>
}
// -----
func.func @batch_norm_channel_range(%x: tensor<4x6x6xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op channel dimension 3 is out of range for rank 3}}
  %0 = nn.batch_norm %x, %w, %b channel 3 reduce [1, 2] epsilon 1.0e-5 : tensor<4x6x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @batch_norm_channel_negative(%x: tensor<4x6x6xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op channel dimension -1 is out of range for rank 3}}
  %0 = nn.batch_norm %x, %w, %b channel -1 reduce [1, 2] epsilon 1.0e-5 : tensor<4x6x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @batch_norm_reduce_range(%x: tensor<4x6x6xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op reduce dimension 3 is out of range for rank 3}}
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [1, 3] epsilon 1.0e-5 : tensor<4x6x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @batch_norm_reduce_sorted(%x: tensor<4x6x6xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op reduce dimension must be sorted and distinct, got [2, 1]}}
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [2, 1] epsilon 1.0e-5 : tensor<4x6x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @batch_norm_reduce_channel(%x: tensor<4x6x6xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op reduce dimensions must not contain the channel dimension 0}}
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [0, 1, 2] epsilon 1.0e-5 : tensor<4x6x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @batch_norm_epsilon(%x: tensor<4x6x6xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op expects a non-negative epsilon}}
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [1, 2] epsilon -1.0e-5 : tensor<4x6x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @batch_norm_weight_rank(%x: tensor<4x6x6xf32>, %w: tensor<f32>, %b: tensor<f32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op expects weight of rank at least 1, got []}}
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [1, 2] epsilon 1.0e-5 : tensor<4x6x6xf32>, tensor<f32>, tensor<f32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
// Batch dimensions of the weight must come before the channel dimension.
func.func @batch_norm_weight_batch(%x: tensor<2x5x4x6x6xf32>, %w: tensor<2x5x4x4xf32>, %b: tensor<2x5x4x4xf32>) -> tensor<2x5x4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op weight batch dimensions [2, 5, 4] are not a prefix of the input's leading dimensions [2, 5]}}
  %0 = nn.batch_norm %x, %w, %b channel 2 reduce [1, 3, 4] epsilon 1.0e-5 : tensor<2x5x4x6x6xf32>, tensor<2x5x4x4xf32>, tensor<2x5x4x4xf32> -> tensor<2x5x4x6x6xf32>
  return %0 : tensor<2x5x4x6x6xf32>
}
// -----
func.func @batch_norm_weight_channels(%x: tensor<4x6x6xf32>, %w: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op weight shape [6] does not match the 4 channels of the input [4, 6, 6]}}
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [1, 2] epsilon 1.0e-5 : tensor<4x6x6xf32>, tensor<6xf32>, tensor<6xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @batch_norm_bias_shape(%x: tensor<2x5x4x6x6xf32>, %w: tensor<2x4xf32>, %b: tensor<4xf32>) -> tensor<2x5x4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op bias shape [4] does not match the expected shape [2, 4]}}
  %0 = nn.batch_norm %x, %w, %b channel 2 reduce [1, 3, 4] epsilon 1.0e-5 : tensor<2x5x4x6x6xf32>, tensor<2x4xf32>, tensor<4xf32> -> tensor<2x5x4x6x6xf32>
  return %0 : tensor<2x5x4x6x6xf32>
}
// -----
func.func @batch_norm_result_shape(%x: tensor<4x6x6xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4x36xf32> {
  // expected-error@+1 {{'nn.batch_norm' op result shape [4, 36] does not match the expected shape [4, 6, 6]}}
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [1, 2] epsilon 1.0e-5 : tensor<4x6x6xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4x36xf32>
  return %0 : tensor<4x36xf32>
}
// -----
func.func @batch_norm_element_type(%x: tensor<4x6x6xf32>, %w: tensor<4xf32>, %b: tensor<4xf64>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.batch_norm' op operand element type 'f64' does not match result element type 'f32'}}
  %0 = nn.batch_norm %x, %w, %b channel 0 reduce [1, 2] epsilon 1.0e-5 : tensor<4x6x6xf32>, tensor<4xf32>, tensor<4xf64> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}

//===----------------------------------------------------------------------===//
// nn.layer_norm
//===----------------------------------------------------------------------===//
// -----
func.func @layer_norm_rank0(%x: tensor<f32>, %w: tensor<1xf32>, %b: tensor<1xf32>) -> tensor<f32> {
  // expected-error@+1 {{'nn.layer_norm' op expects an input of rank >= 1}}
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-5 : tensor<f32>, tensor<1xf32>, tensor<1xf32> -> tensor<f32>
  return %0 : tensor<f32>
}
// -----
func.func @layer_norm_epsilon(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'nn.layer_norm' op expects a non-negative epsilon}}
  %0 = nn.layer_norm %x, %w, %b epsilon -1.0 : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
// -----
func.func @layer_norm_weight_rank(%x: tensor<2x8xf32>, %w: tensor<f32>, %b: tensor<f32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'nn.layer_norm' op expects weight of rank at least 1, got []}}
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-5 : tensor<2x8xf32>, tensor<f32>, tensor<f32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
// -----
func.func @layer_norm_weight_batch(%x: tensor<4x2x8xf32>, %w: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<4x2x8xf32> {
  // expected-error@+1 {{'nn.layer_norm' op weight batch dimensions [2] are not a prefix of the input's leading dimensions [4, 2]}}
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-5 : tensor<4x2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<4x2x8xf32>
  return %0 : tensor<4x2x8xf32>
}
// -----
func.func @layer_norm_weight_size(%x: tensor<2x8xf32>, %w: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'nn.layer_norm' op weight shape [2] does not match the normalised size 8 of the input [2, 8]}}
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-5 : tensor<2x8xf32>, tensor<2xf32>, tensor<2xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
// -----
func.func @layer_norm_bias_shape(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'nn.layer_norm' op bias shape [2, 8] does not match the expected shape [8]}}
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-5 : tensor<2x8xf32>, tensor<8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
// -----
func.func @layer_norm_result_shape(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<16xf32> {
  // expected-error@+1 {{'nn.layer_norm' op result shape [16] does not match the expected shape [2, 8]}}
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-5 : tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
// -----
func.func @layer_norm_element_type(%x: tensor<2x8xbf16>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error@+1 {{'nn.layer_norm' op operand element type 'bf16' does not match result element type 'f32'}}
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-5 : tensor<2x8xbf16>, tensor<8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

//===----------------------------------------------------------------------===//
// nn.embedding
//===----------------------------------------------------------------------===//
// -----
func.func @softmax_axis(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error@+1 {{'nn.softmax' op axis 2 is out of range for rank 2}}
  %0 = nn.softmax %x axis 2 : tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
// -----
func.func @log_softmax_axis(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error@+1 {{'nn.log_softmax' op axis -1 is out of range for rank 2}}
  %0 = nn.log_softmax %x axis -1 : tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
// -----
func.func @softmax_rank0(%x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'nn.softmax' op axis 0 is out of range for rank 0}}
  %0 = nn.softmax %x axis 0 : tensor<f32>
  return %0 : tensor<f32>
}

//===----------------------------------------------------------------------===//
// nn.reshape
//===----------------------------------------------------------------------===//
