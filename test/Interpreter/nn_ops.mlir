// RUN: metac-opt %s --verify-roundtrip > /dev/null

// One function per nn op and configuration, all f64 unless the name says
// otherwise, evaluated by metac-eval on pseudo-random inputs and recomputed
// with PyTorch by test/reference/check_nn_ops.py (see nn_ops.test). Every
// public function needs a reference there; private ones are helpers.
// `metac.eval.min` / `metac.eval.max` set the range of an argument's random
// values (floats default to [-1, 1), integers to [0, 2)).

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

func.func @neg(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %0 = nn.neg %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @neg_scalar(%x: tensor<f64>) -> tensor<f64> {
  %0 = nn.neg %x : tensor<f64>
  return %0 : tensor<f64>
}

func.func @exp(%x: tensor<3x4xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}) -> tensor<3x4xf64> {
  %0 = nn.exp %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @log(%x: tensor<3x4xf64> {metac.eval.min = 0.01 : f64, metac.eval.max = 5.0 : f64}) -> tensor<3x4xf64> {
  %0 = nn.log %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @sqrt(%x: tensor<3x4xf64> {metac.eval.min = 0.0 : f64, metac.eval.max = 4.0 : f64}) -> tensor<3x4xf64> {
  %0 = nn.sqrt %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @rsqrt(%x: tensor<3x4xf64> {metac.eval.min = 0.01 : f64, metac.eval.max = 4.0 : f64}) -> tensor<3x4xf64> {
  %0 = nn.rsqrt %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @erf(%x: tensor<3x4xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}) -> tensor<3x4xf64> {
  %0 = nn.erf %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @relu(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %0 = nn.relu %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @step(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %0 = nn.step %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

// step(0) = 0 and relu(0) = 0: the boundary, on a constant.
func.func @step_relu_at_zero() -> (tensor<3xf64>, tensor<3xf64>) {
  %c = arith.constant dense<[-0.0, 0.0, 1.0e-300]> : tensor<3xf64>
  %0 = nn.step %c : tensor<3xf64>
  %1 = nn.relu %c : tensor<3xf64>
  return %0, %1 : tensor<3xf64>, tensor<3xf64>
}

func.func @tanh(%x: tensor<3x4xf64> {metac.eval.min = -4.0 : f64, metac.eval.max = 4.0 : f64}) -> tensor<3x4xf64> {
  %0 = nn.tanh %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @sigmoid(%x: tensor<3x4xf64> {metac.eval.min = -8.0 : f64, metac.eval.max = 8.0 : f64}) -> tensor<3x4xf64> {
  %0 = nn.sigmoid %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @gelu(%x: tensor<3x4xf64> {metac.eval.min = -4.0 : f64, metac.eval.max = 4.0 : f64}) -> tensor<3x4xf64> {
  %0 = nn.gelu %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @scale(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %0 = nn.scale %x by 2.5 : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @stop_gradient(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %0 = nn.stop_gradient %x : tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

// Conversions round to nearest, ties to even; a 16-bit op's result is
// stored rounded to its type (f32 inputs, so the corpus stays valid when
// the runtime's tests retype its f64 tensors).
func.func @convert_bf16(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = nn.convert %x : tensor<3x4xf32> -> tensor<3x4xbf16>
  %1 = nn.convert %0 : tensor<3x4xbf16> -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

func.func @convert_f16(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = nn.convert %x : tensor<3x4xf32> -> tensor<3x4xf16>
  %1 = nn.convert %0 : tensor<3x4xf16> -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

func.func @mul_bf16(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = nn.convert %a : tensor<3x4xf32> -> tensor<3x4xbf16>
  %1 = nn.convert %b : tensor<3x4xf32> -> tensor<3x4xbf16>
  %2 = nn.mul %0, %1 : tensor<3x4xbf16>
  %3 = nn.convert %2 : tensor<3x4xbf16> -> tensor<3x4xf32>
  return %3 : tensor<3x4xf32>
}

func.func @add(%a: tensor<2x3x4xf64>, %b: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.add %a, %b : tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

func.func @sub(%a: tensor<2x3x4xf64>, %b: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.sub %a, %b : tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

func.func @mul(%a: tensor<2x3x4xf64>, %b: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.mul %a, %b : tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

func.func @div(%a: tensor<2x3x4xf64>, %b: tensor<2x3x4xf64> {metac.eval.min = 0.25 : f64, metac.eval.max = 2.0 : f64}) -> tensor<2x3x4xf64> {
  %0 = nn.div %a, %b : tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

//===----------------------------------------------------------------------===//
// Linear layers and matrix products
//===----------------------------------------------------------------------===//

func.func @linear(%x: tensor<4x3xf64>, %w: tensor<5x3xf64>, %b: tensor<5xf64>) -> tensor<4x5xf64> {
  %0 = nn.linear %x, %w, %b : tensor<4x3xf64>, tensor<5x3xf64>, tensor<5xf64> -> tensor<4x5xf64>
  return %0 : tensor<4x5xf64>
}

func.func @linear_vector(%x: tensor<3xf64>, %w: tensor<5x3xf64>, %b: tensor<5xf64>) -> tensor<5xf64> {
  %0 = nn.linear %x, %w, %b : tensor<3xf64>, tensor<5x3xf64>, tensor<5xf64> -> tensor<5xf64>
  return %0 : tensor<5xf64>
}

func.func @linear_no_bias(%x: tensor<2x4x3xf64>, %w: tensor<5x3xf64>) -> tensor<2x4x5xf64> {
  %0 = nn.linear %x, %w : tensor<2x4x3xf64>, tensor<5x3xf64> -> tensor<2x4x5xf64>
  return %0 : tensor<2x4x5xf64>
}

// A weight batched over tasks: [T, out, in] on [T, N, in].
func.func @linear_batched(%x: tensor<2x4x3xf64>, %w: tensor<2x5x3xf64>, %b: tensor<2x5xf64>) -> tensor<2x4x5xf64> {
  %0 = nn.linear %x, %w, %b : tensor<2x4x3xf64>, tensor<2x5x3xf64>, tensor<2x5xf64> -> tensor<2x4x5xf64>
  return %0 : tensor<2x4x5xf64>
}

// The weight's batch dimensions [2] are a strict prefix of the input's [2, 3, 4].
func.func @linear_batched_prefix(%x: tensor<2x3x4x3xf64>, %w: tensor<2x5x3xf64>, %b: tensor<2x5xf64>) -> tensor<2x3x4x5xf64> {
  %0 = nn.linear %x, %w, %b : tensor<2x3x4x3xf64>, tensor<2x5x3xf64>, tensor<2x5xf64> -> tensor<2x3x4x5xf64>
  return %0 : tensor<2x3x4x5xf64>
}

// The weight's batch dimensions are all of the input's leading dimensions.
func.func @linear_batched_full(%x: tensor<2x3x4xf64>, %w: tensor<2x3x5x4xf64>) -> tensor<2x3x5xf64> {
  %0 = nn.linear %x, %w : tensor<2x3x4xf64>, tensor<2x3x5x4xf64> -> tensor<2x3x5xf64>
  return %0 : tensor<2x3x5xf64>
}

func.func @matmul(%a: tensor<3x4xf64>, %b: tensor<4x5xf64>) -> tensor<3x5xf64> {
  %0 = nn.matmul %a, %b : tensor<3x4xf64>, tensor<4x5xf64> -> tensor<3x5xf64>
  return %0 : tensor<3x5xf64>
}

func.func @matmul_transpose_lhs(%a: tensor<4x3xf64>, %b: tensor<4x5xf64>) -> tensor<3x5xf64> {
  %0 = nn.matmul %a, %b {transpose_lhs} : tensor<4x3xf64>, tensor<4x5xf64> -> tensor<3x5xf64>
  return %0 : tensor<3x5xf64>
}

func.func @matmul_transpose_rhs(%a: tensor<3x4xf64>, %b: tensor<5x4xf64>) -> tensor<3x5xf64> {
  %0 = nn.matmul %a, %b {transpose_rhs} : tensor<3x4xf64>, tensor<5x4xf64> -> tensor<3x5xf64>
  return %0 : tensor<3x5xf64>
}

func.func @matmul_transpose_both(%a: tensor<4x3xf64>, %b: tensor<5x4xf64>) -> tensor<3x5xf64> {
  %0 = nn.matmul %a, %b {transpose_lhs, transpose_rhs} : tensor<4x3xf64>, tensor<5x4xf64> -> tensor<3x5xf64>
  return %0 : tensor<3x5xf64>
}

func.func @matmul_batched(%a: tensor<2x3x3x4xf64>, %b: tensor<2x3x4x5xf64>) -> tensor<2x3x3x5xf64> {
  %0 = nn.matmul %a, %b : tensor<2x3x3x4xf64>, tensor<2x3x4x5xf64> -> tensor<2x3x3x5xf64>
  return %0 : tensor<2x3x3x5xf64>
}

func.func @matmul_batched_transpose_both(%a: tensor<2x4x3xf64>, %b: tensor<2x5x4xf64>) -> tensor<2x3x5xf64> {
  %0 = nn.matmul %a, %b {transpose_lhs, transpose_rhs} : tensor<2x4x3xf64>, tensor<2x5x4xf64> -> tensor<2x3x5xf64>
  return %0 : tensor<2x3x5xf64>
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

func.func @conv2d(%x: tensor<2x3x7x6xf64>, %w: tensor<4x3x3x3xf64>, %b: tensor<4xf64>) -> tensor<2x4x5x4xf64> {
  %0 = nn.conv2d %x, %w, %b stride [1, 1] padding [0, 0] : tensor<2x3x7x6xf64>, tensor<4x3x3x3xf64>, tensor<4xf64> -> tensor<2x4x5x4xf64>
  return %0 : tensor<2x4x5x4xf64>
}

func.func @conv2d_stride_padding(%x: tensor<2x3x7x6xf64>, %w: tensor<4x3x3x2xf64>, %b: tensor<4xf64>) -> tensor<2x4x4x9xf64> {
  %0 = nn.conv2d %x, %w, %b stride [2, 1] padding [1, 2] : tensor<2x3x7x6xf64>, tensor<4x3x3x2xf64>, tensor<4xf64> -> tensor<2x4x4x9xf64>
  return %0 : tensor<2x4x4x9xf64>
}

// The last rows and columns are reached by no window.
func.func @conv2d_uneven_no_bias(%x: tensor<1x2x8x8xf64>, %w: tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64> {
  %0 = nn.conv2d %x, %w stride [3, 2] padding [1, 0] : tensor<1x2x8x8xf64>, tensor<3x2x3x3xf64> -> tensor<1x3x3x3xf64>
  return %0 : tensor<1x3x3x3xf64>
}

func.func @conv2d_unbatched(%x: tensor<3x5x5xf64>, %w: tensor<2x3x2x2xf64>, %b: tensor<2xf64>) -> tensor<2x4x4xf64> {
  %0 = nn.conv2d %x, %w, %b stride [1, 1] padding [0, 0] : tensor<3x5x5xf64>, tensor<2x3x2x2xf64>, tensor<2xf64> -> tensor<2x4x4xf64>
  return %0 : tensor<2x4x4xf64>
}

// Weights batched over tasks: [T, O, C, kh, kw] on [T, N, C, H, W].
func.func @conv2d_batched(%x: tensor<2x3x2x5x5xf64>, %w: tensor<2x4x2x3x3xf64>, %b: tensor<2x4xf64>) -> tensor<2x3x4x5x5xf64> {
  %0 = nn.conv2d %x, %w, %b stride [1, 1] padding [1, 1] : tensor<2x3x2x5x5xf64>, tensor<2x4x2x3x3xf64>, tensor<2x4xf64> -> tensor<2x3x4x5x5xf64>
  return %0 : tensor<2x3x4x5x5xf64>
}

func.func @conv2d_backward_input(%g: tensor<2x4x4x9xf64>, %w: tensor<4x3x3x2xf64>) -> tensor<2x3x7x6xf64> {
  %0 = nn.conv2d_backward_input %g, %w stride [2, 1] padding [1, 2] : tensor<2x4x4x9xf64>, tensor<4x3x3x2xf64> -> tensor<2x3x7x6xf64>
  return %0 : tensor<2x3x7x6xf64>
}

// The result type picks H = 8 among the sizes that give H' = 3.
func.func @conv2d_backward_input_uneven(%g: tensor<1x3x3x3xf64>, %w: tensor<3x2x3x3xf64>) -> tensor<1x2x8x8xf64> {
  %0 = nn.conv2d_backward_input %g, %w stride [3, 2] padding [1, 0] : tensor<1x3x3x3xf64>, tensor<3x2x3x3xf64> -> tensor<1x2x8x8xf64>
  return %0 : tensor<1x2x8x8xf64>
}

func.func @conv2d_backward_input_batched(%g: tensor<2x3x4x5x5xf64>, %w: tensor<2x4x2x3x3xf64>) -> tensor<2x3x2x5x5xf64> {
  %0 = nn.conv2d_backward_input %g, %w stride [1, 1] padding [1, 1] : tensor<2x3x4x5x5xf64>, tensor<2x4x2x3x3xf64> -> tensor<2x3x2x5x5xf64>
  return %0 : tensor<2x3x2x5x5xf64>
}

func.func @conv2d_backward_weight(%x: tensor<2x3x7x6xf64>, %g: tensor<2x4x4x9xf64>) -> tensor<4x3x3x2xf64> {
  %0 = nn.conv2d_backward_weight %x, %g stride [2, 1] padding [1, 2] : tensor<2x3x7x6xf64>, tensor<2x4x4x9xf64> -> tensor<4x3x3x2xf64>
  return %0 : tensor<4x3x3x2xf64>
}

func.func @conv2d_backward_weight_uneven(%x: tensor<1x2x8x8xf64>, %g: tensor<1x3x3x3xf64>) -> tensor<3x2x3x3xf64> {
  %0 = nn.conv2d_backward_weight %x, %g stride [3, 2] padding [1, 0] : tensor<1x2x8x8xf64>, tensor<1x3x3x3xf64> -> tensor<3x2x3x3xf64>
  return %0 : tensor<3x2x3x3xf64>
}

// Per-task weight gradients, summed over the samples of each task.
func.func @conv2d_backward_weight_batched(%x: tensor<2x3x2x5x5xf64>, %g: tensor<2x3x4x5x5xf64>) -> tensor<2x4x2x3x3xf64> {
  %0 = nn.conv2d_backward_weight %x, %g stride [1, 1] padding [1, 1] : tensor<2x3x2x5x5xf64>, tensor<2x3x4x5x5xf64> -> tensor<2x4x2x3x3xf64>
  return %0 : tensor<2x4x2x3x3xf64>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

func.func @max_pool2d(%x: tensor<2x3x6x6xf64>) -> tensor<2x3x3x3xf64> {
  %0 = nn.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x3x6x6xf64> -> tensor<2x3x3x3xf64>
  return %0 : tensor<2x3x3x3xf64>
}

// Overlapping windows over -inf padding; negative inputs so that a window
// that took the padding would show it.
func.func @max_pool2d_padding(%x: tensor<2x2x7x5xf64> {metac.eval.min = -2.0 : f64, metac.eval.max = -1.0 : f64}) -> tensor<2x2x4x5xf64> {
  %0 = nn.max_pool2d %x kernel [3, 3] stride [2, 1] padding [1, 1] : tensor<2x2x7x5xf64> -> tensor<2x2x4x5xf64>
  return %0 : tensor<2x2x4x5xf64>
}

func.func @max_pool2d_unbatched(%x: tensor<3x6x5xf64>) -> tensor<3x5x4xf64> {
  %0 = nn.max_pool2d %x kernel [2, 2] stride [1, 1] padding [0, 0] : tensor<3x6x5xf64> -> tensor<3x5x4xf64>
  return %0 : tensor<3x5x4xf64>
}

func.func @max_pool2d_backward(%x: tensor<2x2x7x5xf64>, %g: tensor<2x2x4x5xf64>) -> tensor<2x2x7x5xf64> {
  %0 = nn.max_pool2d_backward %x, %g kernel [3, 3] stride [2, 1] padding [1, 1] : tensor<2x2x7x5xf64>, tensor<2x2x4x5xf64> -> tensor<2x2x7x5xf64>
  return %0 : tensor<2x2x7x5xf64>
}

// step(x) is 0 or 1, so most windows tie: the first maximum (row-major in
// the window) takes the gradient.
func.func @max_pool2d_backward_ties(%x: tensor<2x2x6x6xf64>, %g: tensor<2x2x6x6xf64>) -> tensor<2x2x6x6xf64> {
  %s = nn.step %x : tensor<2x2x6x6xf64>
  %0 = nn.max_pool2d_backward %s, %g kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x2x6x6xf64>, tensor<2x2x6x6xf64> -> tensor<2x2x6x6xf64>
  return %0 : tensor<2x2x6x6xf64>
}

// All ties, including windows that start in the padding.
func.func @max_pool2d_backward_zeros(%g: tensor<1x1x3x3xf64>) -> tensor<1x1x4x4xf64> {
  %x = arith.constant dense<0.0> : tensor<1x1x4x4xf64>
  %0 = nn.max_pool2d_backward %x, %g kernel [2, 2] stride [2, 2] padding [1, 1] : tensor<1x1x4x4xf64>, tensor<1x1x3x3xf64> -> tensor<1x1x4x4xf64>
  return %0 : tensor<1x1x4x4xf64>
}

func.func @max_pool2d_gather(%x: tensor<2x2x7x5xf64>, %s: tensor<2x2x7x5xf64>) -> tensor<2x2x4x5xf64> {
  %0 = nn.max_pool2d_gather %x, %s kernel [3, 3] stride [2, 1] padding [1, 1] : tensor<2x2x7x5xf64>, tensor<2x2x7x5xf64> -> tensor<2x2x4x5xf64>
  return %0 : tensor<2x2x4x5xf64>
}

func.func @max_pool2d_gather_ties(%x: tensor<2x2x6x6xf64>, %s: tensor<2x2x6x6xf64>) -> tensor<2x2x6x6xf64> {
  %r = nn.relu %x : tensor<2x2x6x6xf64>
  %t = nn.step %r : tensor<2x2x6x6xf64>
  %0 = nn.max_pool2d_gather %t, %s kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<2x2x6x6xf64>, tensor<2x2x6x6xf64> -> tensor<2x2x6x6xf64>
  return %0 : tensor<2x2x6x6xf64>
}

func.func @avg_pool2d(%x: tensor<2x3x6x6xf64>) -> tensor<2x3x3x3xf64> {
  %0 = nn.avg_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x3x6x6xf64> -> tensor<2x3x3x3xf64>
  return %0 : tensor<2x3x3x3xf64>
}

// Padding counts in the window size (count_include_pad=True).
func.func @avg_pool2d_padding(%x: tensor<2x2x7x5xf64>) -> tensor<2x2x4x5xf64> {
  %0 = nn.avg_pool2d %x kernel [3, 3] stride [2, 1] padding [1, 1] : tensor<2x2x7x5xf64> -> tensor<2x2x4x5xf64>
  return %0 : tensor<2x2x4x5xf64>
}

func.func @avg_pool2d_rank5(%x: tensor<2x2x2x4x4xf64>) -> tensor<2x2x2x3x3xf64> {
  %0 = nn.avg_pool2d %x kernel [2, 2] stride [1, 1] padding [0, 0] : tensor<2x2x2x4x4xf64> -> tensor<2x2x2x3x3xf64>
  return %0 : tensor<2x2x2x3x3xf64>
}

func.func @avg_pool2d_backward(%g: tensor<2x2x4x5xf64>) -> tensor<2x2x7x5xf64> {
  %0 = nn.avg_pool2d_backward %g kernel [3, 3] stride [2, 1] padding [1, 1] : tensor<2x2x4x5xf64> -> tensor<2x2x7x5xf64>
  return %0 : tensor<2x2x7x5xf64>
}

// The last rows are reached by no window.
func.func @avg_pool2d_backward_uneven(%g: tensor<1x2x3x3xf64>) -> tensor<1x2x8x6xf64> {
  %0 = nn.avg_pool2d_backward %g kernel [3, 2] stride [3, 2] padding [1, 0] : tensor<1x2x3x3xf64> -> tensor<1x2x8x6xf64>
  return %0 : tensor<1x2x8x6xf64>
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

func.func @batch_norm(%x: tensor<4x3x5x5xf64>, %w: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<4x3x5x5xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 1 reduce [0, 2, 3] epsilon 1.0e-05 : tensor<4x3x5x5xf64>, tensor<3xf64>, tensor<3xf64> -> tensor<4x3x5x5xf64>
  return %0 : tensor<4x3x5x5xf64>
}

func.func @batch_norm_features(%x: tensor<6x4xf64>, %w: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<6x4xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 1 reduce [0] epsilon 0.1 : tensor<6x4xf64>, tensor<4xf64>, tensor<4xf64> -> tensor<6x4xf64>
  return %0 : tensor<6x4xf64>
}

// Per-task weights [T, C] on [T, N, C, H, W], statistics over N, H, W.
func.func @batch_norm_batched(%x: tensor<2x5x3x4x4xf64>, %w: tensor<2x3xf64>, %b: tensor<2x3xf64>) -> tensor<2x5x3x4x4xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 2 reduce [1, 3, 4] epsilon 1.0e-05 : tensor<2x5x3x4x4xf64>, tensor<2x3xf64>, tensor<2x3xf64> -> tensor<2x5x3x4x4xf64>
  return %0 : tensor<2x5x3x4x4xf64>
}

// Statistics per channel and per position of the last dimension.
func.func @batch_norm_partial(%x: tensor<4x3x5xf64>, %w: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<4x3x5xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 1 reduce [0] epsilon 1.0e-05 : tensor<4x3x5xf64>, tensor<3xf64>, tensor<3xf64> -> tensor<4x3x5xf64>
  return %0 : tensor<4x3x5xf64>
}

func.func @batch_norm_channel_last(%x: tensor<4x5x3xf64>, %w: tensor<3xf64>, %b: tensor<3xf64>) -> tensor<4x5x3xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 2 reduce [0, 1] epsilon 1.0e-05 : tensor<4x5x3xf64>, tensor<3xf64>, tensor<3xf64> -> tensor<4x5x3xf64>
  return %0 : tensor<4x5x3xf64>
}

func.func @layer_norm(%x: tensor<4x6xf64>, %w: tensor<6xf64>, %b: tensor<6xf64>) -> tensor<4x6xf64> {
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-05 : tensor<4x6xf64>, tensor<6xf64>, tensor<6xf64> -> tensor<4x6xf64>
  return %0 : tensor<4x6xf64>
}

func.func @layer_norm_vector(%x: tensor<6xf64>, %w: tensor<6xf64>, %b: tensor<6xf64>) -> tensor<6xf64> {
  %0 = nn.layer_norm %x, %w, %b epsilon 0.5 : tensor<6xf64>, tensor<6xf64>, tensor<6xf64> -> tensor<6xf64>
  return %0 : tensor<6xf64>
}

func.func @layer_norm_batched(%x: tensor<2x3x6xf64>, %w: tensor<2x6xf64>, %b: tensor<2x6xf64>) -> tensor<2x3x6xf64> {
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-05 : tensor<2x3x6xf64>, tensor<2x6xf64>, tensor<2x6xf64> -> tensor<2x3x6xf64>
  return %0 : tensor<2x3x6xf64>
}

func.func @softmax(%x: tensor<3x4x5xf64>) -> tensor<3x4x5xf64> {
  %0 = nn.softmax %x axis 2 : tensor<3x4x5xf64>
  return %0 : tensor<3x4x5xf64>
}

func.func @softmax_axis0(%x: tensor<3x4x5xf64>) -> tensor<3x4x5xf64> {
  %0 = nn.softmax %x axis 0 : tensor<3x4x5xf64>
  return %0 : tensor<3x4x5xf64>
}

// Large logits: the shift by the maximum keeps exp finite.
func.func @softmax_large(%x: tensor<3x4x5xf64> {metac.eval.min = -800.0 : f64, metac.eval.max = 800.0 : f64}) -> tensor<3x4x5xf64> {
  %0 = nn.softmax %x axis 1 : tensor<3x4x5xf64>
  return %0 : tensor<3x4x5xf64>
}

func.func @log_softmax(%x: tensor<3x4x5xf64>) -> tensor<3x4x5xf64> {
  %0 = nn.log_softmax %x axis 2 : tensor<3x4x5xf64>
  return %0 : tensor<3x4x5xf64>
}

func.func @log_softmax_axis1(%x: tensor<3x4x5xf64> {metac.eval.min = -800.0 : f64, metac.eval.max = 800.0 : f64}) -> tensor<3x4x5xf64> {
  %0 = nn.log_softmax %x axis 1 : tensor<3x4x5xf64>
  return %0 : tensor<3x4x5xf64>
}

//===----------------------------------------------------------------------===//
// Shape manipulation and reductions
//===----------------------------------------------------------------------===//

func.func @reshape(%x: tensor<2x3x4xf64>) -> tensor<4x6xf64> {
  %0 = nn.reshape %x : tensor<2x3x4xf64> -> tensor<4x6xf64>
  return %0 : tensor<4x6xf64>
}

func.func @reshape_scalar(%x: tensor<1x1xf64>) -> tensor<f64> {
  %0 = nn.reshape %x : tensor<1x1xf64> -> tensor<f64>
  return %0 : tensor<f64>
}

func.func @transpose(%x: tensor<2x3x4xf64>) -> tensor<4x2x3xf64> {
  %0 = nn.transpose %x [2, 0, 1] : tensor<2x3x4xf64> -> tensor<4x2x3xf64>
  return %0 : tensor<4x2x3xf64>
}

func.func @transpose_2d(%x: tensor<3x5xf64>) -> tensor<5x3xf64> {
  %0 = nn.transpose %x [1, 0] : tensor<3x5xf64> -> tensor<5x3xf64>
  return %0 : tensor<5x3xf64>
}

func.func @broadcast(%x: tensor<3xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.broadcast %x dims [0, 2] : tensor<3xf64> -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

func.func @broadcast_middle(%x: tensor<2x3xf64>) -> tensor<2x5x3xf64> {
  %0 = nn.broadcast %x dims [1] : tensor<2x3xf64> -> tensor<2x5x3xf64>
  return %0 : tensor<2x5x3xf64>
}

func.func @broadcast_scalar(%x: tensor<f64>) -> tensor<2x3xf64> {
  %0 = nn.broadcast %x dims [0, 1] : tensor<f64> -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

func.func @reduce_sum(%x: tensor<2x3x4xf64>) -> tensor<3xf64> {
  %0 = nn.reduce_sum %x dims [0, 2] : tensor<2x3x4xf64> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

func.func @reduce_sum_all(%x: tensor<2x3x4xf64>) -> tensor<f64> {
  %0 = nn.reduce_sum %x dims [0, 1, 2] : tensor<2x3x4xf64> -> tensor<f64>
  return %0 : tensor<f64>
}

func.func @reduce_sum_none(%x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %0 = nn.reduce_sum %x dims [] : tensor<2x3xf64> -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

func.func @reduce_mean(%x: tensor<2x3x4xf64>) -> tensor<2x4xf64> {
  %0 = nn.reduce_mean %x dims [1] : tensor<2x3x4xf64> -> tensor<2x4xf64>
  return %0 : tensor<2x4xf64>
}

func.func @reduce_mean_all(%x: tensor<2x3x4xf64>) -> tensor<f64> {
  %0 = nn.reduce_mean %x dims [0, 1, 2] : tensor<2x3x4xf64> -> tensor<f64>
  return %0 : tensor<f64>
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

func.func @mse_loss(%p: tensor<4x3xf64>, %t: tensor<4x3xf64>) -> tensor<f64> {
  %0 = nn.mse_loss %p, %t : tensor<4x3xf64>, tensor<4x3xf64> -> tensor<f64>
  return %0 : tensor<f64>
}

func.func @mse_loss_batched(%p: tensor<2x4x3xf64>, %t: tensor<2x4x3xf64>) -> tensor<2xf64> {
  %0 = nn.mse_loss %p, %t {batch_rank = 1 : i64} : tensor<2x4x3xf64>, tensor<2x4x3xf64> -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

func.func @mse_loss_batch_rank2(%p: tensor<2x4x3xf64>, %t: tensor<2x4x3xf64>) -> tensor<2x4xf64> {
  %0 = nn.mse_loss %p, %t {batch_rank = 2 : i64} : tensor<2x4x3xf64>, tensor<2x4x3xf64> -> tensor<2x4xf64>
  return %0 : tensor<2x4xf64>
}

// Every dimension kept: the mean over no dimension is the squared error.
func.func @mse_loss_full_rank(%p: tensor<2x3xf64>, %t: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %0 = nn.mse_loss %p, %t {batch_rank = 2 : i64} : tensor<2x3xf64>, tensor<2x3xf64> -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

func.func @cross_entropy_loss(%l: tensor<6x5xf64> {metac.eval.min = -3.0 : f64, metac.eval.max = 3.0 : f64}, %y: tensor<6xi64> {metac.eval.max = 5 : i64}) -> tensor<f64> {
  %0 = nn.cross_entropy_loss %l, %y : tensor<6x5xf64>, tensor<6xi64> -> tensor<f64>
  return %0 : tensor<f64>
}

func.func @cross_entropy_loss_batched(%l: tensor<2x6x5xf64>, %y: tensor<2x6xi64> {metac.eval.max = 5 : i64}) -> tensor<2xf64> {
  %0 = nn.cross_entropy_loss %l, %y {batch_rank = 1 : i64} : tensor<2x6x5xf64>, tensor<2x6xi64> -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// i32 labels, several sample dimensions after the batch dimension.
func.func @cross_entropy_loss_positions(%l: tensor<2x3x4x5xf64>, %y: tensor<2x3x4xi32> {metac.eval.max = 5 : i64}) -> tensor<2xf64> {
  %0 = nn.cross_entropy_loss %l, %y {batch_rank = 1 : i64} : tensor<2x3x4x5xf64>, tensor<2x3x4xi32> -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

func.func @cross_entropy_loss_single(%l: tensor<5xf64> {metac.eval.min = -800.0 : f64, metac.eval.max = 800.0 : f64}, %y: tensor<i64> {metac.eval.max = 5 : i64}) -> tensor<f64> {
  %0 = nn.cross_entropy_loss %l, %y : tensor<5xf64>, tensor<i64> -> tensor<f64>
  return %0 : tensor<f64>
}

func.func @cross_entropy_loss_full_rank(%l: tensor<2x3x5xf64>, %y: tensor<2x3xi64> {metac.eval.max = 5 : i64}) -> tensor<2x3xf64> {
  %0 = nn.cross_entropy_loss %l, %y {batch_rank = 2 : i64} : tensor<2x3x5xf64>, tensor<2x3xi64> -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

func.func @accuracy(%l: tensor<40x5xf64>, %y: tensor<40xi64> {metac.eval.max = 5 : i64}) -> tensor<f64> {
  %0 = nn.accuracy %l, %y : tensor<40x5xf64>, tensor<40xi64> -> tensor<f64>
  return %0 : tensor<f64>
}

func.func @accuracy_batched(%l: tensor<3x20x4xf64>, %y: tensor<3x20xi32> {metac.eval.max = 4 : i64}) -> tensor<3xf64> {
  %0 = nn.accuracy %l, %y {batch_rank = 1 : i64} : tensor<3x20x4xf64>, tensor<3x20xi32> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

//===----------------------------------------------------------------------===//
// Integer-indexed ops
//===----------------------------------------------------------------------===//

func.func @one_hot(%y: tensor<2x3xi64> {metac.eval.max = 4 : i64}) -> tensor<2x3x4xf64> {
  %0 = nn.one_hot %y : tensor<2x3xi64> -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

func.func @one_hot_i32(%y: tensor<5xi32> {metac.eval.max = 3 : i64}) -> tensor<5x3xf64> {
  %0 = nn.one_hot %y : tensor<5xi32> -> tensor<5x3xf64>
  return %0 : tensor<5x3xf64>
}

// Top-k routing with a capacity: 2 groups of 6 tokens over 4 experts, 2
// choices each, 3 slots per expert (12 choices for 12 slots: some experts
// overflow and drop); one choice over 3 experts with 2 slots; equal
// probabilities (the lower expert index first).
func.func @moe_dispatch(%p: tensor<2x6x4xf64>) -> tensor<2x6x4x3xf64> {
  %0 = nn.moe_dispatch %p {top_k = 2 : i64} : tensor<2x6x4xf64> -> tensor<2x6x4x3xf64>
  return %0 : tensor<2x6x4x3xf64>
}

func.func @moe_dispatch_top1(%p: tensor<5x3xf64>) -> tensor<5x3x2xf64> {
  %0 = nn.moe_dispatch %p {top_k = 1 : i64} : tensor<5x3xf64> -> tensor<5x3x2xf64>
  return %0 : tensor<5x3x2xf64>
}

func.func @moe_dispatch_ties(%x: tensor<3xf64>) -> tensor<3x3x2xf64> {
  %p = arith.constant dense<[[0.4, 0.4, 0.2], [0.2, 0.4, 0.4], [0.25, 0.25, 0.5]]> : tensor<3x3xf64>
  %0 = nn.moe_dispatch %p {top_k = 2 : i64} : tensor<3x3xf64> -> tensor<3x3x2xf64>
  return %0 : tensor<3x3x2xf64>
}

func.func @embedding(%ids: tensor<2x3xi64> {metac.eval.max = 7 : i64}, %t: tensor<7x4xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.embedding %ids, %t : tensor<2x3xi64>, tensor<7x4xf64> -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

func.func @embedding_i32(%ids: tensor<5xi32> {metac.eval.max = 3 : i64}, %t: tensor<3x2xf64>) -> tensor<5x2xf64> {
  %0 = nn.embedding %ids, %t : tensor<5xi32>, tensor<3x2xf64> -> tensor<5x2xf64>
  return %0 : tensor<5x2xf64>
}

// A table per task: [T, V, D] with ids [T, N].
func.func @embedding_batched(%ids: tensor<2x3xi64> {metac.eval.max = 5 : i64}, %t: tensor<2x5x4xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.embedding %ids, %t : tensor<2x3xi64>, tensor<2x5x4xf64> -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

func.func @embedding_batched_prefix(%ids: tensor<2x3x4xi64> {metac.eval.max = 5 : i64}, %t: tensor<2x5x3xf64>) -> tensor<2x3x4x3xf64> {
  %0 = nn.embedding %ids, %t : tensor<2x3x4xi64>, tensor<2x5x3xf64> -> tensor<2x3x4x3xf64>
  return %0 : tensor<2x3x4x3xf64>
}

// Ids repeat: their rows of the gradient add up.
func.func @embedding_backward(%ids: tensor<2x6xi64> {metac.eval.max = 4 : i64}, %g: tensor<2x6x5xf64>) -> tensor<4x5xf64> {
  %0 = nn.embedding_backward %ids, %g : tensor<2x6xi64>, tensor<2x6x5xf64> -> tensor<4x5xf64>
  return %0 : tensor<4x5xf64>
}

func.func @embedding_backward_batched(%ids: tensor<2x6xi32> {metac.eval.max = 3 : i64}, %g: tensor<2x6x4xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.embedding_backward %ids, %g : tensor<2x6xi32>, tensor<2x6x4xf64> -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

//===----------------------------------------------------------------------===//
// Constants, calls and element types
//===----------------------------------------------------------------------===//

func.func @constant_splat(%x: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %c = arith.constant dense<0.5> : tensor<2x3xf64>
  %0 = nn.mul %x, %c : tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

func.func @constant_ids(%t: tensor<4x2xf64>) -> (tensor<3x2xf64>, tensor<3x4xf64>) {
  %ids = arith.constant dense<[2, 0, 3]> : tensor<3xi64>
  %labels = arith.constant dense<1> : tensor<3xi32>
  %0 = nn.embedding %ids, %t : tensor<3xi64>, tensor<4x2xf64> -> tensor<3x2xf64>
  %1 = nn.one_hot %labels : tensor<3xi32> -> tensor<3x4xf64>
  return %0, %1 : tensor<3x2xf64>, tensor<3x4xf64>
}

// f32 inputs are f32 values and f32 constants are rounded to f32; the
// arithmetic is in double.
func.func @constant_f32(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[0.1, 0.2, 0.3]> : tensor<3xf32>
  %0 = nn.add %x, %c : tensor<3xf32>
  return %0 : tensor<3xf32>
}

func.func private @dense_relu(%x: tensor<4x3xf64>, %w: tensor<3x3xf64>, %b: tensor<3xf64>) -> tensor<4x3xf64> {
  %0 = nn.linear %x, %w, %b : tensor<4x3xf64>, tensor<3x3xf64>, tensor<3xf64> -> tensor<4x3xf64>
  %1 = nn.relu %0 : tensor<4x3xf64>
  return %1 : tensor<4x3xf64>
}

// A two-layer classifier through calls of a private helper.
func.func @call_mlp(%x: tensor<4x3xf64>, %w1: tensor<3x3xf64>, %b1: tensor<3xf64>, %w2: tensor<3x3xf64>, %b2: tensor<3xf64>, %y: tensor<4xi64> {metac.eval.max = 3 : i64}) -> (tensor<f64>, tensor<4x3xf64>) {
  %h = func.call @dense_relu(%x, %w1, %b1) : (tensor<4x3xf64>, tensor<3x3xf64>, tensor<3xf64>) -> tensor<4x3xf64>
  %z = func.call @dense_relu(%h, %w2, %b2) : (tensor<4x3xf64>, tensor<3x3xf64>, tensor<3xf64>) -> tensor<4x3xf64>
  %loss = nn.cross_entropy_loss %z, %y : tensor<4x3xf64>, tensor<4xi64> -> tensor<f64>
  return %loss, %h : tensor<f64>, tensor<4x3xf64>
}
