// RUN: metac-opt %s -split-input-file -verify-diagnostics
// Verifier errors of the nn ops: layers.

func.func @integer_linear_weight(%x: tensor<2x3xf32>, %w: tensor<4x3xi32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{operand #1 must be statically shaped tensor of f16, bf16, f32 or f64, but got 'tensor<4x3xi32>'}}
  %0 = nn.linear %x, %w : tensor<2x3xf32>, tensor<4x3xi32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
// -----
func.func @float_ids(%ids: tensor<4xf32>, %table: tensor<10x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{operand #0 must be statically shaped tensor of i32 or i64, but got 'tensor<4xf32>'}}
  %0 = nn.embedding %ids, %table : tensor<4xf32>, tensor<10x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
// -----
func.func @linear_rank0_input(%x: tensor<f32>, %w: tensor<4x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'nn.linear' op expects an input of rank >= 1}}
  %0 = nn.linear %x, %w : tensor<f32>, tensor<4x3xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @linear_weight_rank(%x: tensor<2x3xf32>, %w: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'nn.linear' op expects weight of rank at least 2, got [3]}}
  %0 = nn.linear %x, %w : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
// -----
func.func @linear_weight_batch_mismatch(%x: tensor<8x10x3xf32>, %w: tensor<7x4x3xf32>) -> tensor<8x10x4xf32> {
  // expected-error@+1 {{'nn.linear' op weight batch dimensions [7] are not a prefix of the input's leading dimensions [8, 10]}}
  %0 = nn.linear %x, %w : tensor<8x10x3xf32>, tensor<7x4x3xf32> -> tensor<8x10x4xf32>
  return %0 : tensor<8x10x4xf32>
}
// -----
func.func @linear_weight_batch_too_long(%x: tensor<10x3xf32>, %w: tensor<8x10x4x3xf32>) -> tensor<10x4xf32> {
  // expected-error@+1 {{'nn.linear' op weight batch dimensions [8, 10] are not a prefix of the input's leading dimensions [10]}}
  %0 = nn.linear %x, %w : tensor<10x3xf32>, tensor<8x10x4x3xf32> -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}
// -----
func.func @linear_in_features(%x: tensor<2x3xf32>, %w: tensor<4x5xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'nn.linear' op input features 3 do not match the weight's in-features 5 (input [2, 3], weight [4, 5])}}
  %0 = nn.linear %x, %w : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
// -----
func.func @linear_bias_shape(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'nn.linear' op bias shape [3] does not match the expected shape [4]}}
  %0 = nn.linear %x, %w, %b : tensor<2x3xf32>, tensor<4x3xf32>, tensor<3xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
// -----
func.func @linear_batched_bias_shape(%x: tensor<8x10x3xf32>, %w: tensor<8x4x3xf32>, %b: tensor<4xf32>) -> tensor<8x10x4xf32> {
  // expected-error@+1 {{'nn.linear' op bias shape [4] does not match the expected shape [8, 4]}}
  %0 = nn.linear %x, %w, %b : tensor<8x10x3xf32>, tensor<8x4x3xf32>, tensor<4xf32> -> tensor<8x10x4xf32>
  return %0 : tensor<8x10x4xf32>
}
// -----
func.func @linear_result_shape(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'nn.linear' op result shape [2, 3] does not match the expected shape [2, 4]}}
  %0 = nn.linear %x, %w : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
func.func @linear_element_type(%x: tensor<2x3xf32>, %w: tensor<4x3xf16>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'nn.linear' op operand element type 'f16' does not match result element type 'f32'}}
  %0 = nn.linear %x, %w : tensor<2x3xf32>, tensor<4x3xf16> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
// -----
func.func @linear_bias_element_type(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xbf16>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'nn.linear' op operand element type 'bf16' does not match result element type 'f32'}}
  %0 = nn.linear %x, %w, %b : tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xbf16> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// nn.attention
//===----------------------------------------------------------------------===//
// -----
func.func @attention_rank(%q: tensor<3xf32>, %k: tensor<3x3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'nn.attention' op expects query, key and value of one rank >= 2, got [3], [3, 3] and [3, 3]}}
  %0 = nn.attention %q, %k, %k scale 1.0 : tensor<3xf32>, tensor<3x3xf32>, tensor<3x3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
// -----
func.func @attention_batch(%q: tensor<2x3x4xf32>, %k: tensor<3x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'nn.attention' op batch dimensions differ: [2, 3, 4], [3, 3, 4] and [3, 3, 4]}}
  %0 = nn.attention %q, %k, %k scale 1.0 : tensor<2x3x4xf32>, tensor<3x3x4xf32>, tensor<3x3x4xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
// -----
func.func @attention_width(%q: tensor<3x4xf32>, %k: tensor<5x2xf32>, %v: tensor<5x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'nn.attention' op query and key widths differ: 4 vs 2}}
  %0 = nn.attention %q, %k, %v scale 1.0 : tensor<3x4xf32>, tensor<5x2xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
// -----
func.func @attention_length(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<6x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'nn.attention' op key and value lengths differ: 5 vs 6}}
  %0 = nn.attention %q, %k, %v scale 1.0 : tensor<3x4xf32>, tensor<5x4xf32>, tensor<6x2xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
// -----
func.func @attention_causal(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention' op is causal but its query length 3 is not its key length 5}}
  %0 = nn.attention %q, %k, %k scale 1.0 causal : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_ring_empty(%q: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention' op 'ring_axes' names no mesh axis}}
  %0 = nn.attention %q, %q, %q scale 1.0 {ring_axes = array<i16>} : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_ring_axis(%q: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention' op 'ring_axes' has 6, not an axis of the six-axis mesh}}
  %0 = nn.attention %q, %q, %q scale 1.0 {ring_axes = array<i16: 5, 6>} : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_ring_order(%q: tensor<3x4xf32>, %dy: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_backward' op 'ring_axes' must increase, got 5 then 2}}
  %0 = nn.attention_backward %q, %q, %q, %dy scale 1.0 wrt "query" {ring_axes = array<i16: 5, 2>} : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_ring_negative(%q: tensor<3x4xf32>, %dy: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_double_backward' op 'ring_axes' has -1, not an axis of the six-axis mesh}}
  %0 = nn.attention_double_backward %q, %q, %q, %dy, %dy scale 1.0 from "query" wrt "key" {ring_axes = array<i16: -1>} : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_result(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention' op}}
  %0 = nn.attention %q, %k, %v scale 1.0 : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_type(%q: tensor<3x4xf32>, %k: tensor<3x4xf64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention' op}}
  %0 = nn.attention %q, %k, %k scale 1.0 : tensor<3x4xf32>, tensor<3x4xf64>, tensor<3x4xf64> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
//===----------------------------------------------------------------------===//
// nn.attention_backward
//===----------------------------------------------------------------------===//
// -----
func.func @attention_backward_wrt(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_backward' op 'wrt' must be "query", "key" or "value", got "output"}}
  %0 = nn.attention_backward %q, %k, %v, %g scale 1.0 wrt "output" : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<3x2xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_backward_gradient(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>, %g: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_backward' op gradient shape [3, 4] does not match}}
  %0 = nn.attention_backward %q, %k, %v, %g scale 1.0 wrt "query" : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_backward_result(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_backward' op result shape [3, 4] does not match the expected shape [5, 2]}}
  %0 = nn.attention_backward %q, %k, %v, %g scale 1.0 wrt "value" : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<3x2xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_backward_operands(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<6x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_backward' op key and value lengths differ: 5 vs 6}}
  %0 = nn.attention_backward %q, %k, %v, %g scale 1.0 wrt "query" : tensor<3x4xf32>, tensor<5x4xf32>, tensor<6x2xf32>, tensor<3x2xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_backward_type(%q: tensor<3x4xf32>, %k: tensor<3x4xf32>, %g: tensor<3x4xf64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_backward' op}}
  %0 = nn.attention_backward %q, %k, %k, %g scale 1.0 causal wrt "key" : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf64> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
//===----------------------------------------------------------------------===//
// nn.attention_double_backward
//===----------------------------------------------------------------------===//
// -----
func.func @attention_double_backward_from(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_double_backward' op 'from' must be "query", "key" or "value", got "grad"}}
  %0 = nn.attention_double_backward %q, %k, %v, %g, %g scale 1.0 from "grad" wrt "query" : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<3x2xf32>, tensor<3x2xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_double_backward_wrt(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_double_backward' op 'wrt' must be "query", "key", "value" or "grad", got "scale"}}
  %0 = nn.attention_double_backward %q, %k, %v, %g, %q scale 1.0 from "query" wrt "scale" : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<3x2xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_double_backward_cotangent(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'nn.attention_double_backward' op cotangent shape [3, 4] does not match}}
  %0 = nn.attention_double_backward %q, %k, %v, %g, %q scale 1.0 from "key" wrt "grad" : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<3x2xf32>, tensor<3x4xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
// -----
func.func @attention_double_backward_result(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>, %g: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_double_backward' op result shape [3, 4] does not match the expected shape [3, 2]}}
  %0 = nn.attention_double_backward %q, %k, %v, %g, %v scale 1.0 from "value" wrt "grad" : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<3x2xf32>, tensor<5x2xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @attention_double_backward_gradient(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %v: tensor<5x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.attention_double_backward' op gradient shape [3, 4] does not match}}
  %0 = nn.attention_double_backward %q, %k, %v, %q, %q scale 1.0 from "query" wrt "query" : tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x2xf32>, tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
//===----------------------------------------------------------------------===//
// nn.matmul
//===----------------------------------------------------------------------===//
// -----
func.func @matmul_rank(%a: tensor<3xf32>, %b: tensor<3x4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'nn.matmul' op expects operands of rank >= 2, got [3] and [3, 4]}}
  %0 = nn.matmul %a, %b : tensor<3xf32>, tensor<3x4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @matmul_batch_rank(%a: tensor<5x2x3xf32>, %b: tensor<3x4xf32>) -> tensor<5x2x4xf32> {
  // expected-error@+1 {{'nn.matmul' op batch dimensions differ: [5, 2, 3] and [3, 4]}}
  %0 = nn.matmul %a, %b : tensor<5x2x3xf32>, tensor<3x4xf32> -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}
// -----
func.func @matmul_batch_dims(%a: tensor<5x2x3xf32>, %b: tensor<6x3x4xf32>) -> tensor<5x2x4xf32> {
  // expected-error@+1 {{'nn.matmul' op batch dimensions differ: [5, 2, 3] and [6, 3, 4]}}
  %0 = nn.matmul %a, %b : tensor<5x2x3xf32>, tensor<6x3x4xf32> -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}
// -----
func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'nn.matmul' op contracting dimensions differ: 3 vs 4 (lhs [2, 3], rhs [4, 3])}}
  %0 = nn.matmul %a, %b : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
func.func @matmul_contracting_transpose_lhs(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'nn.matmul' op contracting dimensions differ: 2 vs 3 (lhs [2, 3], rhs [3, 4])}}
  %0 = nn.matmul %a, %b {transpose_lhs} : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
// -----
func.func @matmul_result_transpose_rhs(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'nn.matmul' op result shape [2, 3] does not match the expected shape [2, 4]}}
  %0 = nn.matmul %a, %b {transpose_rhs} : tensor<2x3xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
// -----
func.func @matmul_element_type(%a: tensor<2x3xf64>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'nn.matmul' op operand element type 'f64' does not match result element type 'f32'}}
  %0 = nn.matmul %a, %b : tensor<2x3xf64>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// nn.conv2d
//===----------------------------------------------------------------------===//
// -----
func.func @conv2d_input_rank(%x: tensor<28x28xf32>, %w: tensor<8x1x3x3xf32>) -> tensor<8x26x26xf32> {
  // expected-error@+1 {{'nn.conv2d' op expects an input of rank >= 3 ([..., C, H, W]), got [28, 28]}}
  %0 = nn.conv2d %x, %w stride [1, 1] padding [0, 0] : tensor<28x28xf32>, tensor<8x1x3x3xf32> -> tensor<8x26x26xf32>
  return %0 : tensor<8x26x26xf32>
}
// -----
func.func @conv2d_stride_count(%x: tensor<1x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op expects stride to have 2 values, got 1}}
  %0 = nn.conv2d %x, %w stride [1] padding [0, 0] : tensor<1x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @conv2d_stride_zero(%x: tensor<1x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op expects stride values >= 1, got [1, 0]}}
  %0 = nn.conv2d %x, %w stride [1, 0] padding [0, 0] : tensor<1x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @conv2d_padding_count(%x: tensor<1x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op expects padding to have 2 values, got 3}}
  %0 = nn.conv2d %x, %w stride [1, 1] padding [0, 0, 0] : tensor<1x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @conv2d_padding_negative(%x: tensor<1x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op expects padding values >= 0, got [-1, 0]}}
  %0 = nn.conv2d %x, %w stride [1, 1] padding [-1, 0] : tensor<1x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @conv2d_weight_rank(%x: tensor<1x8x8xf32>, %w: tensor<1x3x3xf32>) -> tensor<1x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op expects weight of rank at least 4, got [1, 3, 3]}}
  %0 = nn.conv2d %x, %w stride [1, 1] padding [0, 0] : tensor<1x8x8xf32>, tensor<1x3x3xf32> -> tensor<1x6x6xf32>
  return %0 : tensor<1x6x6xf32>
}
// -----
func.func @conv2d_weight_batch(%x: tensor<2x5x1x8x8xf32>, %w: tensor<3x4x1x3x3xf32>) -> tensor<2x5x4x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op weight batch dimensions [3] are not a prefix of the input's leading dimensions [2, 5]}}
  %0 = nn.conv2d %x, %w stride [1, 1] padding [0, 0] : tensor<2x5x1x8x8xf32>, tensor<3x4x1x3x3xf32> -> tensor<2x5x4x6x6xf32>
  return %0 : tensor<2x5x4x6x6xf32>
}
// -----
func.func @conv2d_channels(%x: tensor<3x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op input channels 3 do not match the weight's in-channels 1 (input [3, 8, 8], weight [4, 1, 3, 3])}}
  %0 = nn.conv2d %x, %w stride [1, 1] padding [0, 0] : tensor<3x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @conv2d_bias_shape(%x: tensor<2x5x1x8x8xf32>, %w: tensor<2x4x1x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x5x4x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op bias shape [4] does not match the expected shape [2, 4]}}
  %0 = nn.conv2d %x, %w, %b stride [1, 1] padding [0, 0] : tensor<2x5x1x8x8xf32>, tensor<2x4x1x3x3xf32>, tensor<4xf32> -> tensor<2x5x4x6x6xf32>
  return %0 : tensor<2x5x4x6x6xf32>
}
// -----
func.func @conv2d_window(%x: tensor<1x2x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<4x1x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op window of size 3 does not fit the padded input size 2}}
  %0 = nn.conv2d %x, %w stride [1, 1] padding [0, 0] : tensor<1x2x8xf32>, tensor<4x1x3x3xf32> -> tensor<4x1x6xf32>
  return %0 : tensor<4x1x6xf32>
}
// -----
func.func @conv2d_result_shape(%x: tensor<1x8x8xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op result shape [4, 6, 6] does not match the expected shape [4, 4, 3]}}
  %0 = nn.conv2d %x, %w stride [2, 3] padding [1, 1] : tensor<1x8x8xf32>, tensor<4x1x3x3xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}
// -----
func.func @conv2d_element_type(%x: tensor<1x8x8xf16>, %w: tensor<4x1x3x3xf32>) -> tensor<4x6x6xf32> {
  // expected-error@+1 {{'nn.conv2d' op operand element type 'f16' does not match result element type 'f32'}}
  %0 = nn.conv2d %x, %w stride [1, 1] padding [0, 0] : tensor<1x8x8xf16>, tensor<4x1x3x3xf32> -> tensor<4x6x6xf32>
  return %0 : tensor<4x6x6xf32>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//
// -----
func.func @max_pool_input_rank(%x: tensor<8x8xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'nn.max_pool2d' op expects an input of rank >= 3 ([..., C, H, W]), got [8, 8]}}
  %0 = nn.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<8x8xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
// -----
func.func @max_pool_kernel_count(%x: tensor<1x8x8xf32>) -> tensor<1x4x4xf32> {
  // expected-error@+1 {{'nn.max_pool2d' op expects kernel to have 2 values, got 1}}
  %0 = nn.max_pool2d %x kernel [2] stride [2, 2] padding [0, 0] : tensor<1x8x8xf32> -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}
// -----
func.func @max_pool_kernel_zero(%x: tensor<1x8x8xf32>) -> tensor<1x4x4xf32> {
  // expected-error@+1 {{'nn.max_pool2d' op expects kernel values >= 1, got [0, 2]}}
  %0 = nn.max_pool2d %x kernel [0, 2] stride [2, 2] padding [0, 0] : tensor<1x8x8xf32> -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}
// -----
func.func @avg_pool_stride_count(%x: tensor<1x8x8xf32>) -> tensor<1x4x4xf32> {
  // expected-error@+1 {{'nn.avg_pool2d' op expects stride to have 2 values, got 0}}
  %0 = nn.avg_pool2d %x kernel [2, 2] stride [] padding [0, 0] : tensor<1x8x8xf32> -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}
// -----
func.func @avg_pool_stride_negative(%x: tensor<1x8x8xf32>) -> tensor<1x4x4xf32> {
  // expected-error@+1 {{'nn.avg_pool2d' op expects stride values >= 1, got [2, -2]}}
  %0 = nn.avg_pool2d %x kernel [2, 2] stride [2, -2] padding [0, 0] : tensor<1x8x8xf32> -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}
// -----
func.func @avg_pool_padding_negative(%x: tensor<1x8x8xf32>) -> tensor<1x4x4xf32> {
  // expected-error@+1 {{'nn.avg_pool2d' op expects padding values >= 0, got [0, -1]}}
  %0 = nn.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, -1] : tensor<1x8x8xf32> -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}
// -----
func.func @max_pool_padding_half_kernel(%x: tensor<1x8x8xf32>) -> tensor<1x10x8xf32> {
  // expected-error@+1 {{'nn.max_pool2d' op padding [2, 0] exceeds half the kernel [3, 3]}}
  %0 = nn.max_pool2d %x kernel [3, 3] stride [1, 1] padding [2, 0] : tensor<1x8x8xf32> -> tensor<1x10x8xf32>
  return %0 : tensor<1x10x8xf32>
}
// -----
func.func @avg_pool_window(%x: tensor<1x8x1xf32>) -> tensor<1x4x1xf32> {
  // expected-error@+1 {{'nn.avg_pool2d' op window of size 3 does not fit the padded input size 1}}
  %0 = nn.avg_pool2d %x kernel [2, 3] stride [2, 1] padding [0, 0] : tensor<1x8x1xf32> -> tensor<1x4x1xf32>
  return %0 : tensor<1x4x1xf32>
}
// -----
func.func @max_pool_result_shape(%x: tensor<2x1x8x8xf32>) -> tensor<2x1x8x8xf32> {
  // expected-error@+1 {{'nn.max_pool2d' op result shape [2, 1, 8, 8] does not match the expected shape [2, 1, 4, 4]}}
  %0 = nn.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x1x8x8xf32> -> tensor<2x1x8x8xf32>
  return %0 : tensor<2x1x8x8xf32>
}
// -----
func.func @avg_pool_element_type(%x: tensor<1x8x8xf32>) -> tensor<1x4x4xf16> {
  // expected-error@+1 {{'nn.avg_pool2d' op operand element type 'f32' does not match result element type 'f16'}}
  %0 = nn.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<1x8x8xf32> -> tensor<1x4x4xf16>
  return %0 : tensor<1x4x4xf16>
}

//===----------------------------------------------------------------------===//
// nn.batch_norm
//===----------------------------------------------------------------------===//
// -----
func.func @embedding_table_rank(%ids: tensor<4xi64>, %table: tensor<10xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'nn.embedding' op expects table of rank at least 2, got [10]}}
  %0 = nn.embedding %ids, %table : tensor<4xi64>, tensor<10xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// -----
func.func @embedding_table_batch(%ids: tensor<4x16xi32>, %table: tensor<3x100x8xf32>) -> tensor<4x16x8xf32> {
  // expected-error@+1 {{'nn.embedding' op table batch dimensions [3] are not a prefix of the input's leading dimensions [4, 16]}}
  %0 = nn.embedding %ids, %table : tensor<4x16xi32>, tensor<3x100x8xf32> -> tensor<4x16x8xf32>
  return %0 : tensor<4x16x8xf32>
}
// -----
func.func @embedding_result_shape(%ids: tensor<4xi64>, %table: tensor<10x3xf32>) -> tensor<4x10xf32> {
  // expected-error@+1 {{'nn.embedding' op result shape [4, 10] does not match the expected shape [4, 3]}}
  %0 = nn.embedding %ids, %table : tensor<4xi64>, tensor<10x3xf32> -> tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}
// -----
func.func @embedding_element_type(%ids: tensor<4xi64>, %table: tensor<10x3xf32>) -> tensor<4x3xf16> {
  // expected-error@+1 {{'nn.embedding' op operand element type 'f32' does not match result element type 'f16'}}
  %0 = nn.embedding %ids, %table : tensor<4xi64>, tensor<10x3xf32> -> tensor<4x3xf16>
  return %0 : tensor<4x3xf16>
}

//===----------------------------------------------------------------------===//
// nn.softmax and nn.log_softmax
//===----------------------------------------------------------------------===//
// -----
func.func @conv2d_backward_input_grad_shape(%w: tensor<8x3x3x3xf32>, %g: tensor<2x8x5x4xf32>) -> tensor<2x3x8x8xf32> {
  // expected-error@+1 {{'nn.conv2d_backward_input' op gradient shape [2, 8, 5, 4] does not match the expected shape [2, 8, 4, 4]}}
  %0 = nn.conv2d_backward_input %g, %w stride [2, 2] padding [1, 1] : tensor<2x8x5x4xf32>, tensor<8x3x3x3xf32> -> tensor<2x3x8x8xf32>
  return %0 : tensor<2x3x8x8xf32>
}
// -----
func.func @conv2d_backward_input_channels(%w: tensor<8x3x3x3xf32>, %g: tensor<2x8x4x4xf32>) -> tensor<2x4x8x8xf32> {
  // expected-error@+1 {{'nn.conv2d_backward_input' op input channels 4 do not match the weight's in-channels 3 (input [2, 4, 8, 8], weight [8, 3, 3, 3])}}
  %0 = nn.conv2d_backward_input %g, %w stride [2, 2] padding [1, 1] : tensor<2x8x4x4xf32>, tensor<8x3x3x3xf32> -> tensor<2x4x8x8xf32>
  return %0 : tensor<2x4x8x8xf32>
}
// -----
func.func @conv2d_backward_weight_grad_shape(%x: tensor<2x3x8x8xf32>, %g: tensor<2x8x8x8xf32>) -> tensor<8x3x3x3xf32> {
  // expected-error@+1 {{'nn.conv2d_backward_weight' op gradient shape [2, 8, 8, 8] does not match the expected shape [2, 8, 4, 4]}}
  %0 = nn.conv2d_backward_weight %x, %g stride [2, 2] padding [1, 1] : tensor<2x3x8x8xf32>, tensor<2x8x8x8xf32> -> tensor<8x3x3x3xf32>
  return %0 : tensor<8x3x3x3xf32>
}
// -----
func.func @conv2d_backward_weight_element(%x: tensor<2x3x8x8xf32>, %g: tensor<2x8x4x4xf64>) -> tensor<8x3x3x3xf32> {
  // expected-error@+1 {{'nn.conv2d_backward_weight' op operand element type 'f64' does not match result element type 'f32'}}
  %0 = nn.conv2d_backward_weight %x, %g stride [2, 2] padding [1, 1] : tensor<2x3x8x8xf32>, tensor<2x8x4x4xf64> -> tensor<8x3x3x3xf32>
  return %0 : tensor<8x3x3x3xf32>
}
// -----
func.func @max_pool2d_backward_grad(%x: tensor<3x4x4xf32>, %g: tensor<3x4x4xf32>) -> tensor<3x4x4xf32> {
  // expected-error@+1 {{'nn.max_pool2d_backward' op gradient shape [3, 4, 4] does not match the expected shape [3, 2, 2]}}
  %0 = nn.max_pool2d_backward %x, %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x4x4xf32>, tensor<3x4x4xf32> -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}
// -----
func.func @max_pool2d_backward_result(%x: tensor<3x4x4xf32>, %g: tensor<3x2x2xf32>) -> tensor<3x2x2xf32> {
  // expected-error@+1 {{'nn.max_pool2d_backward' op result shape [3, 2, 2] does not match the expected shape [3, 4, 4]}}
  %0 = nn.max_pool2d_backward %x, %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x4x4xf32>, tensor<3x2x2xf32> -> tensor<3x2x2xf32>
  return %0 : tensor<3x2x2xf32>
}
// -----
func.func @max_pool2d_gather_source(%x: tensor<3x4x4xf32>, %s: tensor<3x2x2xf32>) -> tensor<3x2x2xf32> {
  // expected-error@+1 {{'nn.max_pool2d_gather' op source shape [3, 2, 2] does not match the expected shape [3, 4, 4]}}
  %0 = nn.max_pool2d_gather %x, %s kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x4x4xf32>, tensor<3x2x2xf32> -> tensor<3x2x2xf32>
  return %0 : tensor<3x2x2xf32>
}
// -----
func.func @max_pool2d_gather_result(%x: tensor<3x4x4xf32>) -> tensor<3x4x4xf32> {
  // expected-error@+1 {{'nn.max_pool2d_gather' op result shape [3, 4, 4] does not match the expected shape [3, 2, 2]}}
  %0 = nn.max_pool2d_gather %x, %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x4x4xf32>, tensor<3x4x4xf32> -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}
// -----
func.func @avg_pool2d_backward_grad(%g: tensor<3x3x3xf32>) -> tensor<3x4x4xf32> {
  // expected-error@+1 {{'nn.avg_pool2d_backward' op gradient shape [3, 3, 3] does not match the expected shape [3, 2, 2]}}
  %0 = nn.avg_pool2d_backward %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<3x3x3xf32> -> tensor<3x4x4xf32>
  return %0 : tensor<3x4x4xf32>
}
// -----
func.func @avg_pool2d_backward_rank(%g: tensor<2x2xf32>) -> tensor<4x4xf32> {
  // expected-error@+1 {{'nn.avg_pool2d_backward' op expects an input of rank >= 3 ([..., C, H, W]), got [4, 4]}}
  %0 = nn.avg_pool2d_backward %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x2xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
// -----
func.func @embedding_backward_grad(%ids: tensor<7xi64>, %g: tensor<7x8xf32>) -> tensor<100x16xf32> {
  // expected-error@+1 {{'nn.embedding_backward' op gradient shape [7, 8] does not match the expected shape [7, 16]}}
  %0 = nn.embedding_backward %ids, %g : tensor<7xi64>, tensor<7x8xf32> -> tensor<100x16xf32>
  return %0 : tensor<100x16xf32>
}
// -----
func.func @embedding_backward_prefix(%ids: tensor<2x7xi64>, %g: tensor<2x7x16xf32>) -> tensor<3x100x16xf32> {
  // expected-error@+1 {{'nn.embedding_backward' op table batch dimensions [3] are not a prefix of the input's leading dimensions [2, 7]}}
  %0 = nn.embedding_backward %ids, %g : tensor<2x7xi64>, tensor<2x7x16xf32> -> tensor<3x100x16xf32>
  return %0 : tensor<3x100x16xf32>
}
// -----
func.func @moe_dispatch_rank(%p: tensor<4xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'nn.moe_dispatch' op probabilities must be [..., tokens, experts], got [4]}}
  %0 = nn.moe_dispatch %p {top_k = 1 : i64} : tensor<4xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
// -----
func.func @moe_dispatch_shape(%p: tensor<6x4xf32>) -> tensor<6x3x2xf32> {
  // expected-error@+1 {{'nn.moe_dispatch' op result shape [6, 3, 2] is not the probabilities' shape [6, 4] plus a capacity dimension}}
  %0 = nn.moe_dispatch %p {top_k = 1 : i64} : tensor<6x4xf32> -> tensor<6x3x2xf32>
  return %0 : tensor<6x3x2xf32>
}
// -----
func.func @moe_dispatch_top_k(%p: tensor<6x4xf32>) -> tensor<6x4x2xf32> {
  // expected-error@+1 {{'nn.moe_dispatch' op top_k must be in [1, 4] (the experts), got 5}}
  %0 = nn.moe_dispatch %p {top_k = 5 : i64} : tensor<6x4xf32> -> tensor<6x4x2xf32>
  return %0 : tensor<6x4x2xf32>
}
// -----
func.func @moe_dispatch_top_k_zero(%p: tensor<6x4xf32>) -> tensor<6x4x2xf32> {
  // expected-error@+1 {{'nn.moe_dispatch' op top_k must be in [1, 4] (the experts), got 0}}
  %0 = nn.moe_dispatch %p {top_k = 0 : i64} : tensor<6x4xf32> -> tensor<6x4x2xf32>
  return %0 : tensor<6x4x2xf32>
}
// -----
func.func @moe_dispatch_capacity(%p: tensor<6x4xf32>) -> tensor<6x4x0xf32> {
  // expected-error@+1 {{'nn.moe_dispatch' op capacity must be at least 1, got 0}}
  %0 = nn.moe_dispatch %p {top_k = 1 : i64} : tensor<6x4xf32> -> tensor<6x4x0xf32>
  return %0 : tensor<6x4x0xf32>
}
// -----
func.func @moe_dispatch_type(%p: tensor<6x4xf32>) -> tensor<6x4x2xf64> {
  // expected-error@+1 {{'nn.moe_dispatch' op result element type differs from the probabilities'}}
  %0 = nn.moe_dispatch %p {top_k = 1 : i64} : tensor<6x4xf32> -> tensor<6x4x2xf64>
  return %0 : tensor<6x4x2xf64>
}
