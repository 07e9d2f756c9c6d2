// RUN: metac-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the nn ops: shapes.

func.func @dynamic_result(%x: tensor<4x3xf32>) -> tensor<?xf32> {
  // expected-error@+1 {{result #0 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<?xf32>'}}
  %0 = nn.reshape %x : tensor<4x3xf32> -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
// -----
func.func @reshape_count(%x: tensor<4x3xf32>) -> tensor<5x2xf32> {
  // expected-error@+1 {{'nn.reshape' op cannot reshape [4, 3] (12 elements) to [5, 2] (10 elements)}}
  %0 = nn.reshape %x : tensor<4x3xf32> -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}
// -----
func.func @reshape_element_type(%x: tensor<4x3xf32>) -> tensor<12xf64> {
  // expected-error@+1 {{'nn.reshape' op operand element type 'f32' does not match result element type 'f64'}}
  %0 = nn.reshape %x : tensor<4x3xf32> -> tensor<12xf64>
  return %0 : tensor<12xf64>
}

//===----------------------------------------------------------------------===//
// nn.transpose
//===----------------------------------------------------------------------===//
// -----
func.func @transpose_rank(%x: tensor<2x3x4xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'nn.transpose' op permutation [1, 0] does not have rank 3}}
  %0 = nn.transpose %x [1, 0] : tensor<2x3x4xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
// -----
func.func @transpose_repeated(%x: tensor<2x3x4xf32>) -> tensor<3x3x4xf32> {
  // expected-error@+1 {{'nn.transpose' op permutation [1, 1, 2] is not a permutation of 0..2}}
  %0 = nn.transpose %x [1, 1, 2] : tensor<2x3x4xf32> -> tensor<3x3x4xf32>
  return %0 : tensor<3x3x4xf32>
}
// -----
func.func @transpose_out_of_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'nn.transpose' op permutation [2, 0] is not a permutation of 0..1}}
  %0 = nn.transpose %x [2, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
// -----
func.func @transpose_negative(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'nn.transpose' op permutation [-1, 0] is not a permutation of 0..1}}
  %0 = nn.transpose %x [-1, 0] : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
// -----
func.func @transpose_result_shape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'nn.transpose' op result shape [2, 3] does not match the expected shape [3, 2]}}
  %0 = nn.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
func.func @transpose_element_type(%x: tensor<2x3xf32>) -> tensor<3x2xbf16> {
  // expected-error@+1 {{'nn.transpose' op operand element type 'f32' does not match result element type 'bf16'}}
  %0 = nn.transpose %x [1, 0] : tensor<2x3xf32> -> tensor<3x2xbf16>
  return %0 : tensor<3x2xbf16>
}

//===----------------------------------------------------------------------===//
// nn.broadcast
//===----------------------------------------------------------------------===//
// -----
func.func @broadcast_rank(%x: tensor<4xf32>) -> tensor<3x4x5xf32> {
  // expected-error@+1 {{'nn.broadcast' op result rank 3 is not the input rank 1 plus 1 new dimensions}}
  %0 = nn.broadcast %x dims [0] : tensor<4xf32> -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}
// -----
func.func @broadcast_dim_range(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.broadcast' op dimension 2 is out of range for rank 2}}
  %0 = nn.broadcast %x dims [2] : tensor<4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @broadcast_dims_sorted(%x: tensor<4xf32>) -> tensor<3x4x5xf32> {
  // expected-error@+1 {{'nn.broadcast' op dimension must be sorted and distinct, got [2, 0]}}
  %0 = nn.broadcast %x dims [2, 0] : tensor<4xf32> -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}
// -----
func.func @broadcast_kept_shape(%x: tensor<4xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'nn.broadcast' op input shape [4] does not match the result [4, 3] without the new dimensions [0]}}
  %0 = nn.broadcast %x dims [0] : tensor<4xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
// -----
func.func @broadcast_element_type(%x: tensor<4xf16>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.broadcast' op operand element type 'f16' does not match result element type 'f32'}}
  %0 = nn.broadcast %x dims [0] : tensor<4xf16> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//
// -----
func.func @reduce_sum_dim_range(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'nn.reduce_sum' op dimension 2 is out of range for rank 2}}
  %0 = nn.reduce_sum %x dims [2] : tensor<3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// -----
func.func @reduce_mean_dim_negative(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'nn.reduce_mean' op dimension -1 is out of range for rank 2}}
  %0 = nn.reduce_mean %x dims [-1] : tensor<3x4xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// -----
func.func @reduce_sum_result_shape(%x: tensor<3x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'nn.reduce_sum' op result shape [4] does not match the expected shape [3]}}
  %0 = nn.reduce_sum %x dims [1] : tensor<3x4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @reduce_mean_keepdim(%x: tensor<3x4xf32>) -> tensor<3x1xf32> {
  // expected-error@+1 {{'nn.reduce_mean' op result shape [3, 1] does not match the expected shape [3]}}
  %0 = nn.reduce_mean %x dims [1] : tensor<3x4xf32> -> tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}
