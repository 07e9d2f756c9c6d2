// RUN: metac-opt %s --pass-pipeline='builtin.module(func.func(meta-cost-report))' -verify-diagnostics -split-input-file
//
// The cost model's counts against formulas written out by hand: a
// multiply-add is 2 FLOPs; bytes are every operand and result (f32: 4
// bytes, f64: 8).

// Linear [5, 3] x [4, 3]^T + [4]: 2*5*4*3 + 5*4 = 140 FLOPs; bytes
// (15 + 12 + 4 + 20) * 4 = 204.
// expected-remark@+1 {{total: 140 FLOPs, 204 bytes}}
func.func @linear(%x: tensor<5x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<5x4xf32> {
  // expected-remark@+1 {{140 FLOPs, 204 bytes}}
  %y = nn.linear %x, %w, %b : tensor<5x3xf32>, tensor<4x3xf32>, tensor<4xf32> -> tensor<5x4xf32>
  return %y : tensor<5x4xf32>
}

// -----

// Batched matmul [2, 6, 7] x [2, 7, 3]: 2*(2*6*3)*7 = 504 FLOPs; with the
// left operand transposed ([2, 7, 6]^T), k is 7 again. Bytes: (84 + 42 +
// 36) * 4 = 648 each.
// expected-remark@+1 {{total: 1008 FLOPs, 1296 bytes}}
func.func @matmul(%a: tensor<2x6x7xf32>, %b: tensor<2x7x3xf32>, %t: tensor<2x7x6xf32>) -> (tensor<2x6x3xf32>, tensor<2x6x3xf32>) {
  // expected-remark@+1 {{504 FLOPs, 648 bytes}}
  %y = nn.matmul %a, %b : tensor<2x6x7xf32>, tensor<2x7x3xf32> -> tensor<2x6x3xf32>
  // expected-remark@+1 {{504 FLOPs, 648 bytes}}
  %z = nn.matmul %t, %b {transpose_lhs} : tensor<2x7x6xf32>, tensor<2x7x3xf32> -> tensor<2x6x3xf32>
  return %y, %z : tensor<2x6x3xf32>, tensor<2x6x3xf32>
}

// -----

// Attention of 2 x 6 queries over 6 keys (D = 4, E = 3): 72 pairs of query
// and key, each 2 D + 2 E (the two products) + 4 (exponential, maximum,
// sum, division) = 18 FLOPs: 1296; bytes (48 + 48 + 36 + 36) * 4 = 672.
// Its backward is one call for the three cotangents, which per pair
// recomputes the statistics (2 D + 3) and the probabilities (2 D + 2),
// shared by the three ops: (4 D + 5) / 3 = 7 each; computes dP twice,
// D and dS (4 E + 5 = 17), shared by query and key: 8.5 each; and each
// op's own product, 2 D = 8 (query, key) or 2 E = 6 (value). Per pair:
// value 13, query and key 23.5: 936 and 1692 FLOPs, together 72 * 60 =
// 4320 (8 D + 6 E + 10 per pair). Bytes: the 168 floats read (q, k, v,
// dy) shared by the three (224 bytes each) and each one's result.
// expected-remark@+1 {{total: 5616 FLOPs, 1872 bytes}}
func.func @attention(%q: tensor<2x6x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x3xf32>, %dy: tensor<2x6x3xf32>) -> (tensor<2x6x3xf32>, tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>) {
  // expected-remark@+1 {{1296 FLOPs, 672 bytes}}
  %y = nn.attention %q, %k, %v scale 5.000000e-01 : tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32> -> tensor<2x6x3xf32>
  // expected-remark@+1 {{1692 FLOPs, 416 bytes}}
  %dq = nn.attention_backward %q, %k, %v, %dy scale 5.000000e-01 wrt "query" : tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<2x6x3xf32> -> tensor<2x6x4xf32>
  // expected-remark@+1 {{1692 FLOPs, 416 bytes}}
  %dk = nn.attention_backward %q, %k, %v, %dy scale 5.000000e-01 wrt "key" : tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<2x6x3xf32> -> tensor<2x6x4xf32>
  // expected-remark@+1 {{936 FLOPs, 368 bytes}}
  %dv = nn.attention_backward %q, %k, %v, %dy scale 5.000000e-01 wrt "value" : tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<2x6x3xf32> -> tensor<2x6x3xf32>
  return %y, %dq, %dk, %dv : tensor<2x6x3xf32>, tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>
}

// -----

// Attention's second derivative, the same sizes (72 pairs): one call per
// cotangent of the backward, shared by its ops. For the value's cotangent
// (3 ops: query, key, grad) 8 D + 6 E + 10 = 60 FLOPs per pair, 4320 / 3
// = 1440 per op; for the query's (4 ops) 14 D + 8 E + 20 = 100 per pair,
// 7200 / 4 = 1800. Bytes: the operands read once per call, shared (q, k,
// v, dy and the cotangent: 204 floats for gv, 216 for gq, over 3 and 4
// ops: 272 and 216 bytes), and the op's result (48 floats: 192 bytes).
// expected-remark@+1 {{total: 3240 FLOPs, 872 bytes}}
func.func @attention_double_backward(%q: tensor<2x6x4xf32>, %k: tensor<2x6x4xf32>, %v: tensor<2x6x3xf32>, %dy: tensor<2x6x3xf32>) -> (tensor<2x6x4xf32>, tensor<2x6x4xf32>) {
  // expected-remark@+1 {{1440 FLOPs, 464 bytes}}
  %a = nn.attention_double_backward %q, %k, %v, %dy, %v scale 5.000000e-01 from "value" wrt "query" : tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<2x6x3xf32>, tensor<2x6x3xf32> -> tensor<2x6x4xf32>
  // expected-remark@+1 {{1800 FLOPs, 408 bytes}}
  %b = nn.attention_double_backward %q, %k, %v, %dy, %q scale 5.000000e-01 from "query" wrt "key" : tensor<2x6x4xf32>, tensor<2x6x4xf32>, tensor<2x6x3xf32>, tensor<2x6x3xf32>, tensor<2x6x4xf32> -> tensor<2x6x4xf32>
  return %a, %b : tensor<2x6x4xf32>, tensor<2x6x4xf32>
}

// -----

// Convolution [2, 3, 8, 8] with [4, 3, 3, 3], padding 1: output
// [2, 4, 8, 8] = 512 elements, 2*512*27 + 512 (bias) = 28160 FLOPs. Its
// derivatives do the same multiply-adds: 2*512*27 = 27648 each.
// expected-remark@+1 {{total: 83456 FLOPs}}
func.func @conv(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %g: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) {
  // expected-remark@+1 {{28160 FLOPs}}
  %y = nn.conv2d %x, %w, %b stride [1, 1] padding [1, 1] : tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32> -> tensor<2x4x8x8xf32>
  // expected-remark@+1 {{27648 FLOPs}}
  %dx = nn.conv2d_backward_input %g, %w stride [1, 1] padding [1, 1] : tensor<2x4x8x8xf32>, tensor<4x3x3x3xf32> -> tensor<2x3x8x8xf32>
  // expected-remark@+1 {{27648 FLOPs}}
  %dw = nn.conv2d_backward_weight %x, %g stride [1, 1] padding [1, 1] : tensor<2x3x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<4x3x3x3xf32>
  return %y, %dx, %dw : tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>
}

// -----

// Elementwise: one per element (24); a reduction: one per input element;
// softmax 5 and MSE 3 per element; views cost nothing; a transpose only
// moves bytes (f64: 2 * 24 * 8 = 384).
// expected-remark@+1 {{total: 264 FLOPs, 2368 bytes}}
func.func @elementwise(%x: tensor<4x6xf64>, %y: tensor<4x6xf64>) -> (tensor<4x6xf64>, tensor<4xf64>, tensor<4x6xf64>, tensor<4xf64>, tensor<6x4xf64>, tensor<24xf64>) {
  // expected-remark@+1 {{24 FLOPs, 576 bytes}}
  %a = nn.add %x, %y : tensor<4x6xf64>
  // expected-remark@+1 {{24 FLOPs, 224 bytes}}
  %s = nn.reduce_sum %a dims [1] : tensor<4x6xf64> -> tensor<4xf64>
  // expected-remark@+1 {{120 FLOPs, 384 bytes}}
  %p = nn.softmax %a axis 1 : tensor<4x6xf64>
  // expected-remark@+1 {{72 FLOPs, 416 bytes}}
  %l = nn.mse_loss %p, %y {batch_rank = 1 : i64} : tensor<4x6xf64>, tensor<4x6xf64> -> tensor<4xf64>
  // expected-remark@+1 {{0 FLOPs, 384 bytes}}
  %t = nn.transpose %x [1, 0] : tensor<4x6xf64> -> tensor<6x4xf64>
  %r = nn.reshape %x : tensor<4x6xf64> -> tensor<24xf64>
  // expected-remark@+1 {{24 FLOPs, 384 bytes}}
  %m = nn.relu %a : tensor<4x6xf64>
  return %m, %s, %p, %l, %t, %r : tensor<4x6xf64>, tensor<4xf64>, tensor<4x6xf64>, tensor<4xf64>, tensor<6x4xf64>, tensor<24xf64>
}

// -----

// The outer update: the guard squares and sums 12 + 4 gradient elements
// (32 FLOPs); SGD 5 per parameter element (80).
// expected-remark@+1 {{total: 112 FLOPs}}
func.func @update(%l: tensor<f32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>, %gw: tensor<4x3xf32>, %gb: tensor<4xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
  // expected-remark@+1 {{32 FLOPs}}
  %n, %gate = meta.update_guard %l grads(%gw, %gb : tensor<4x3xf32>, tensor<4xf32>) : tensor<f32> -> tensor<2xf64>, tensor<2xf64>
  // expected-remark@+1 {{80 FLOPs}}
  %p:2 = meta.outer_step #meta.sgd<lr = 0.1, momentum = 0.0, weight_decay = 0.0>
      params(%w, %b : tensor<4x3xf32>, tensor<4xf32>) grads(%gw, %gb : tensor<4x3xf32>, tensor<4xf32>) state()
      gate(%gate : tensor<2xf64>)
  return %p#0, %p#1 : tensor<4x3xf32>, tensor<4xf32>
}
