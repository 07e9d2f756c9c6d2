// RUN: metac-opt %s --verify-roundtrip > /dev/null

// Fused attention and its two derivatives, the part of the interpreter's
// corpus (nn_ops.mlir, whose conventions apply) kept in a file of its own:
// evaluated by metac-eval and recomputed with PyTorch by
// test/reference/check_nn_ops.py (nn_ops.test, which reads both files), and
// against the runtime's tiled kernels by metart-kernels-vs-interpreter.

func.func @attention(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>) -> tensor<2x5x3xf64> {
  %0 = nn.attention %q, %k, %v scale 5.000000e-01 : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64> -> tensor<2x5x3xf64>
  return %0 : tensor<2x5x3xf64>
}

func.func @attention_causal(%q: tensor<2x3x6x4xf64>, %k: tensor<2x3x6x4xf64>, %v: tensor<2x3x6x5xf64>) -> tensor<2x3x6x5xf64> {
  %0 = nn.attention %q, %k, %v scale 1.500000e+00 causal : tensor<2x3x6x4xf64>, tensor<2x3x6x4xf64>, tensor<2x3x6x5xf64> -> tensor<2x3x6x5xf64>
  return %0 : tensor<2x3x6x5xf64>
}

// Longer than the runtime's tiles of 64 queries and 64 keys (two of each,
// the second partial), causal: the online softmax rescales across tiles.
func.func @attention_tiled(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>) -> tensor<1x70x2xf64> {
  %0 = nn.attention %q, %k, %v scale 1.000000e+00 causal : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64> -> tensor<1x70x2xf64>
  return %0 : tensor<1x70x2xf64>
}

func.func @attention_f32(%q: tensor<3x9x4xf32>, %k: tensor<3x9x4xf32>, %v: tensor<3x9x4xf32>) -> tensor<3x9x4xf32> {
  %0 = nn.attention %q, %k, %v scale 5.000000e-01 causal : tensor<3x9x4xf32>, tensor<3x9x4xf32>, tensor<3x9x4xf32> -> tensor<3x9x4xf32>
  return %0 : tensor<3x9x4xf32>
}

// The derivative of fused attention, one cotangent per op.
func.func @attention_backward_query(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>) -> tensor<2x5x4xf64> {
  %0 = nn.attention_backward %q, %k, %v, %dy scale 5.000000e-01 wrt "query" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64> -> tensor<2x5x4xf64>
  return %0 : tensor<2x5x4xf64>
}

func.func @attention_backward_key(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>) -> tensor<2x7x4xf64> {
  %0 = nn.attention_backward %q, %k, %v, %dy scale 5.000000e-01 wrt "key" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64> -> tensor<2x7x4xf64>
  return %0 : tensor<2x7x4xf64>
}

func.func @attention_backward_value(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>) -> tensor<2x7x3xf64> {
  %0 = nn.attention_backward %q, %k, %v, %dy scale 5.000000e-01 wrt "value" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64> -> tensor<2x7x3xf64>
  return %0 : tensor<2x7x3xf64>
}

// Causal and longer than the runtime's tiles (two blocks of queries, two
// tiles of keys, the second partial): statistics and contractions across
// tiles.
func.func @attention_backward_tiled_query(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>, %dy: tensor<1x70x2xf64>) -> tensor<1x70x8xf64> {
  %0 = nn.attention_backward %q, %k, %v, %dy scale 1.000000e+00 causal wrt "query" : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64> -> tensor<1x70x8xf64>
  return %0 : tensor<1x70x8xf64>
}

func.func @attention_backward_tiled_key(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>, %dy: tensor<1x70x2xf64>) -> tensor<1x70x8xf64> {
  %0 = nn.attention_backward %q, %k, %v, %dy scale 1.000000e+00 causal wrt "key" : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64> -> tensor<1x70x8xf64>
  return %0 : tensor<1x70x8xf64>
}

func.func @attention_backward_tiled_value(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>, %dy: tensor<1x70x2xf64>) -> tensor<1x70x2xf64> {
  %0 = nn.attention_backward %q, %k, %v, %dy scale 1.000000e+00 causal wrt "value" : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64> -> tensor<1x70x2xf64>
  return %0 : tensor<1x70x2xf64>
}

func.func @attention_backward_causal_batched(%q: tensor<2x3x6x4xf64>, %k: tensor<2x3x6x4xf64>, %v: tensor<2x3x6x5xf64>, %dy: tensor<2x3x6x5xf64>) -> tensor<2x3x6x4xf64> {
  %0 = nn.attention_backward %q, %k, %v, %dy scale 1.500000e+00 causal wrt "key" : tensor<2x3x6x4xf64>, tensor<2x3x6x4xf64>, tensor<2x3x6x5xf64>, tensor<2x3x6x5xf64> -> tensor<2x3x6x4xf64>
  return %0 : tensor<2x3x6x4xf64>
}

func.func @attention_backward_f32(%q: tensor<3x9x4xf32>, %k: tensor<3x9x4xf32>, %v: tensor<3x9x4xf32>, %dy: tensor<3x9x4xf32>) -> tensor<3x9x4xf32> {
  %0 = nn.attention_backward %q, %k, %v, %dy scale 5.000000e-01 causal wrt "query" : tensor<3x9x4xf32>, tensor<3x9x4xf32>, tensor<3x9x4xf32>, tensor<3x9x4xf32> -> tensor<3x9x4xf32>
  return %0 : tensor<3x9x4xf32>
}

// Its derivative: the cotangent of operand `wrt` of
// nn.attention_backward(..., wrt = from) given its result's cotangent %g.
func.func @attention_double_backward_query_query(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x5x4xf64>) -> tensor<2x5x4xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "query" wrt "query" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x5x4xf64> -> tensor<2x5x4xf64>
  return %0 : tensor<2x5x4xf64>
}

func.func @attention_double_backward_query_key(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x5x4xf64>) -> tensor<2x7x4xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "query" wrt "key" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x5x4xf64> -> tensor<2x7x4xf64>
  return %0 : tensor<2x7x4xf64>
}

func.func @attention_double_backward_query_value(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x5x4xf64>) -> tensor<2x7x3xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "query" wrt "value" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x5x4xf64> -> tensor<2x7x3xf64>
  return %0 : tensor<2x7x3xf64>
}

func.func @attention_double_backward_query_grad(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x5x4xf64>) -> tensor<2x5x3xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "query" wrt "grad" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x5x4xf64> -> tensor<2x5x3xf64>
  return %0 : tensor<2x5x3xf64>
}

func.func @attention_double_backward_key_query(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x7x4xf64>) -> tensor<2x5x4xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "key" wrt "query" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x7x4xf64> -> tensor<2x5x4xf64>
  return %0 : tensor<2x5x4xf64>
}

func.func @attention_double_backward_key_key(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x7x4xf64>) -> tensor<2x7x4xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "key" wrt "key" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x7x4xf64> -> tensor<2x7x4xf64>
  return %0 : tensor<2x7x4xf64>
}

func.func @attention_double_backward_key_value(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x7x4xf64>) -> tensor<2x7x3xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "key" wrt "value" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x7x4xf64> -> tensor<2x7x3xf64>
  return %0 : tensor<2x7x3xf64>
}

func.func @attention_double_backward_key_grad(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x7x4xf64>) -> tensor<2x5x3xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "key" wrt "grad" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x7x4xf64> -> tensor<2x5x3xf64>
  return %0 : tensor<2x5x3xf64>
}

func.func @attention_double_backward_value_query(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x7x3xf64>) -> tensor<2x5x4xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "value" wrt "query" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x7x3xf64> -> tensor<2x5x4xf64>
  return %0 : tensor<2x5x4xf64>
}

func.func @attention_double_backward_value_key(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x7x3xf64>) -> tensor<2x7x4xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "value" wrt "key" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x7x3xf64> -> tensor<2x7x4xf64>
  return %0 : tensor<2x7x4xf64>
}

func.func @attention_double_backward_value_grad(%q: tensor<2x5x4xf64>, %k: tensor<2x7x4xf64>, %v: tensor<2x7x3xf64>, %dy: tensor<2x5x3xf64>, %g: tensor<2x7x3xf64>) -> tensor<2x5x3xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 from "value" wrt "grad" : tensor<2x5x4xf64>, tensor<2x7x4xf64>, tensor<2x7x3xf64>, tensor<2x5x3xf64>, tensor<2x7x3xf64> -> tensor<2x5x3xf64>
  return %0 : tensor<2x5x3xf64>
}

// Causal across two tiles of each kind: the online row statistics.
func.func @attention_double_backward_tiled_query_key(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>, %dy: tensor<1x70x2xf64>, %g: tensor<1x70x8xf64>) -> tensor<1x70x8xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 1.000000e+00 causal from "query" wrt "key" : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64>, tensor<1x70x8xf64> -> tensor<1x70x8xf64>
  return %0 : tensor<1x70x8xf64>
}

func.func @attention_double_backward_tiled_key_query(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>, %dy: tensor<1x70x2xf64>, %g: tensor<1x70x8xf64>) -> tensor<1x70x8xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 1.000000e+00 causal from "key" wrt "query" : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64>, tensor<1x70x8xf64> -> tensor<1x70x8xf64>
  return %0 : tensor<1x70x8xf64>
}

func.func @attention_double_backward_tiled_value_grad(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>, %dy: tensor<1x70x2xf64>, %g: tensor<1x70x2xf64>) -> tensor<1x70x2xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 1.000000e+00 causal from "value" wrt "grad" : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64> -> tensor<1x70x2xf64>
  return %0 : tensor<1x70x2xf64>
}

func.func @attention_double_backward_tiled_query_grad(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>, %dy: tensor<1x70x2xf64>, %g: tensor<1x70x8xf64>) -> tensor<1x70x2xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 1.000000e+00 causal from "query" wrt "grad" : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64>, tensor<1x70x8xf64> -> tensor<1x70x2xf64>
  return %0 : tensor<1x70x2xf64>
}

func.func @attention_double_backward_tiled_key_value(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>, %dy: tensor<1x70x2xf64>, %g: tensor<1x70x8xf64>) -> tensor<1x70x2xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 1.000000e+00 causal from "key" wrt "value" : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64>, tensor<1x70x8xf64> -> tensor<1x70x2xf64>
  return %0 : tensor<1x70x2xf64>
}

func.func @attention_double_backward_tiled_value_query(%q: tensor<1x70x8xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %k: tensor<1x70x8xf64>, %v: tensor<1x70x2xf64>, %dy: tensor<1x70x2xf64>, %g: tensor<1x70x2xf64>) -> tensor<1x70x8xf64> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 1.000000e+00 causal from "value" wrt "query" : tensor<1x70x8xf64>, tensor<1x70x8xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64>, tensor<1x70x2xf64> -> tensor<1x70x8xf64>
  return %0 : tensor<1x70x8xf64>
}

func.func @attention_double_backward_f32(%q: tensor<3x9x4xf32>, %k: tensor<3x9x4xf32>, %v: tensor<3x9x4xf32>, %dy: tensor<3x9x4xf32>, %g: tensor<3x9x4xf32>) -> tensor<3x9x4xf32> {
  %0 = nn.attention_double_backward %q, %k, %v, %dy, %g scale 5.000000e-01 causal from "key" wrt "key" : tensor<3x9x4xf32>, tensor<3x9x4xf32>, tensor<3x9x4xf32>, tensor<3x9x4xf32>, tensor<3x9x4xf32> -> tensor<3x9x4xf32>
  return %0 : tensor<3x9x4xf32>
}
