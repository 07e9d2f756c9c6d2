// Configurations of the nn ops that the runtime's kernels must match the
// reference interpreter on, beyond test/Interpreter/nn_ops.mlir: the paths
// the CPU kernels take (one GEMM per weight slice, the direct 1x1
// convolution, coalesced strided walks, inner softmax axes), empty tensors,
// ties and ids out of range. KernelsVsInterpreterTest runs every public
// function in f64 and, with the element types replaced, in f32.
// `metac.eval.min` / `metac.eval.max` set the range of an argument's random
// values (floats default to [-1, 1), integers to [0, 2)).

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

func.func @gelu_wide(%x: tensor<4x25xf64> {metac.eval.min = -6.0 : f64, metac.eval.max = 6.0 : f64}) -> tensor<4x25xf64> {
  %0 = nn.gelu %x : tensor<4x25xf64>
  return %0 : tensor<4x25xf64>
}

func.func @sigmoid_wide(%x: tensor<100xf64> {metac.eval.min = -20.0 : f64, metac.eval.max = 20.0 : f64}) -> tensor<100xf64> {
  %0 = nn.sigmoid %x : tensor<100xf64>
  return %0 : tensor<100xf64>
}

// An elementwise chain over a 0-d tensor, results feeding operands.
func.func @chain_scalar(%x: tensor<f64>, %y: tensor<f64> {metac.eval.min = 0.5 : f64, metac.eval.max = 2.0 : f64}) -> tensor<f64> {
  %0 = nn.mul %x, %y : tensor<f64>
  %1 = nn.div %0, %y : tensor<f64>
  %2 = nn.sub %1, %x : tensor<f64>
  %3 = nn.add %2, %y : tensor<f64>
  %4 = nn.scale %3 by -0.25 : tensor<f64>
  %5 = nn.tanh %4 : tensor<f64>
  return %5 : tensor<f64>
}

func.func @empty_elementwise(%x: tensor<0x3xf64>) -> tensor<0x3xf64> {
  %0 = nn.exp %x : tensor<0x3xf64>
  %1 = nn.add %0, %x : tensor<0x3xf64>
  return %1 : tensor<0x3xf64>
}

//===----------------------------------------------------------------------===//
// Linear layers and matrix products
//===----------------------------------------------------------------------===//

// Weights batched over two dimensions: one GEMM per [2, 3] slice.
func.func @linear_two_batch_dims(%x: tensor<2x3x4x5xf64>, %w: tensor<2x3x6x5xf64>, %b: tensor<2x3x6xf64>) -> tensor<2x3x4x6xf64> {
  %0 = nn.linear %x, %w, %b : tensor<2x3x4x5xf64>, tensor<2x3x6x5xf64>, tensor<2x3x6xf64> -> tensor<2x3x4x6xf64>
  return %0 : tensor<2x3x4x6xf64>
}

// Large enough for BLAS's blocked kernels.
func.func @linear_large(%x: tensor<67x130xf64>, %w: tensor<45x130xf64>, %b: tensor<45xf64>) -> tensor<67x45xf64> {
  %0 = nn.linear %x, %w, %b : tensor<67x130xf64>, tensor<45x130xf64>, tensor<45xf64> -> tensor<67x45xf64>
  return %0 : tensor<67x45xf64>
}

func.func @linear_empty_rows(%x: tensor<0x3xf64>, %w: tensor<4x3xf64>, %b: tensor<4xf64>) -> tensor<0x4xf64> {
  %0 = nn.linear %x, %w, %b : tensor<0x3xf64>, tensor<4x3xf64>, tensor<4xf64> -> tensor<0x4xf64>
  return %0 : tensor<0x4xf64>
}

// No input features: the result is the bias.
func.func @linear_no_features(%x: tensor<2x0xf64>, %w: tensor<4x0xf64>, %b: tensor<4xf64>) -> tensor<2x4xf64> {
  %0 = nn.linear %x, %w, %b : tensor<2x0xf64>, tensor<4x0xf64>, tensor<4xf64> -> tensor<2x4xf64>
  return %0 : tensor<2x4xf64>
}

func.func @matmul_batched_transpose_lhs(%a: tensor<3x2x5x4xf64>, %b: tensor<3x2x5x6xf64>) -> tensor<3x2x4x6xf64> {
  %0 = nn.matmul %a, %b {transpose_lhs} : tensor<3x2x5x4xf64>, tensor<3x2x5x6xf64> -> tensor<3x2x4x6xf64>
  return %0 : tensor<3x2x4x6xf64>
}

func.func @matmul_batched_transpose_rhs(%a: tensor<4x7x3xf64>, %b: tensor<4x2x3xf64>) -> tensor<4x7x2xf64> {
  %0 = nn.matmul %a, %b {transpose_rhs} : tensor<4x7x3xf64>, tensor<4x2x3xf64> -> tensor<4x7x2xf64>
  return %0 : tensor<4x7x2xf64>
}

func.func @matmul_large(%a: tensor<90x70xf64>, %b: tensor<70x110xf64>) -> tensor<90x110xf64> {
  %0 = nn.matmul %a, %b : tensor<90x70xf64>, tensor<70x110xf64> -> tensor<90x110xf64>
  return %0 : tensor<90x110xf64>
}

func.func @matmul_empty_contraction(%a: tensor<2x3x0xf64>, %b: tensor<2x0x4xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.matmul %a, %b : tensor<2x3x0xf64>, tensor<2x0x4xf64> -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

// 1x1, stride 1, no padding: the image is its own im2col matrix.
func.func @conv2d_pointwise(%x: tensor<2x3x4x5xf64>, %w: tensor<6x3x1x1xf64>, %b: tensor<6xf64>) -> tensor<2x6x4x5xf64> {
  %0 = nn.conv2d %x, %w, %b stride [1, 1] padding [0, 0] : tensor<2x3x4x5xf64>, tensor<6x3x1x1xf64>, tensor<6xf64> -> tensor<2x6x4x5xf64>
  return %0 : tensor<2x6x4x5xf64>
}

func.func @conv2d_pointwise_backward_input(%g: tensor<2x3x6x4x5xf64>, %w: tensor<2x6x3x1x1xf64>) -> tensor<2x3x3x4x5xf64> {
  %0 = nn.conv2d_backward_input %g, %w stride [1, 1] padding [0, 0] : tensor<2x3x6x4x5xf64>, tensor<2x6x3x1x1xf64> -> tensor<2x3x3x4x5xf64>
  return %0 : tensor<2x3x3x4x5xf64>
}

func.func @conv2d_pointwise_backward_weight(%x: tensor<2x3x4x5xf64>, %g: tensor<2x6x4x5xf64>) -> tensor<6x3x1x1xf64> {
  %0 = nn.conv2d_backward_weight %x, %g stride [1, 1] padding [0, 0] : tensor<2x3x4x5xf64>, tensor<2x6x4x5xf64> -> tensor<6x3x1x1xf64>
  return %0 : tensor<6x3x1x1xf64>
}

// Strides larger than the kernel skip input rows and columns.
func.func @conv2d_sparse_stride(%x: tensor<1x2x9x10xf64>, %w: tensor<3x2x2x2xf64>, %b: tensor<3xf64>) -> tensor<1x3x3x3xf64> {
  %0 = nn.conv2d %x, %w, %b stride [3, 4] padding [0, 1] : tensor<1x2x9x10xf64>, tensor<3x2x2x2xf64>, tensor<3xf64> -> tensor<1x3x3x3xf64>
  return %0 : tensor<1x3x3x3xf64>
}

func.func @conv2d_sparse_stride_backward_input(%g: tensor<1x3x3x3xf64>, %w: tensor<3x2x2x2xf64>) -> tensor<1x2x9x10xf64> {
  %0 = nn.conv2d_backward_input %g, %w stride [3, 4] padding [0, 1] : tensor<1x3x3x3xf64>, tensor<3x2x2x2xf64> -> tensor<1x2x9x10xf64>
  return %0 : tensor<1x2x9x10xf64>
}

// Padding wider than the image: windows that hold only padding.
func.func @conv2d_wide_padding(%x: tensor<2x1x2x2xf64>, %w: tensor<2x1x3x3xf64>) -> tensor<2x2x6x6xf64> {
  %0 = nn.conv2d %x, %w stride [1, 1] padding [3, 3] : tensor<2x1x2x2xf64>, tensor<2x1x3x3xf64> -> tensor<2x2x6x6xf64>
  return %0 : tensor<2x2x6x6xf64>
}

func.func @conv2d_wide_padding_backward_weight(%x: tensor<2x1x2x2xf64>, %g: tensor<2x2x6x6xf64>) -> tensor<2x1x3x3xf64> {
  %0 = nn.conv2d_backward_weight %x, %g stride [1, 1] padding [3, 3] : tensor<2x1x2x2xf64>, tensor<2x2x6x6xf64> -> tensor<2x1x3x3xf64>
  return %0 : tensor<2x1x3x3xf64>
}

// Weights batched over two dimensions of four: [T, S] slices, each summed
// over the [N] images after them.
func.func @conv2d_two_batch_dims(%x: tensor<2x2x3x2x5x4xf64>, %w: tensor<2x2x3x2x3x3xf64>, %b: tensor<2x2x3xf64>) -> tensor<2x2x3x3x3x2xf64> {
  %0 = nn.conv2d %x, %w, %b stride [1, 1] padding [0, 0] : tensor<2x2x3x2x5x4xf64>, tensor<2x2x3x2x3x3xf64>, tensor<2x2x3xf64> -> tensor<2x2x3x3x3x2xf64>
  return %0 : tensor<2x2x3x3x3x2xf64>
}

func.func @conv2d_two_batch_dims_backward_weight(%x: tensor<2x2x3x2x5x4xf64>, %g: tensor<2x2x3x3x3x2xf64>) -> tensor<2x2x3x2x3x3xf64> {
  %0 = nn.conv2d_backward_weight %x, %g stride [1, 1] padding [0, 0] : tensor<2x2x3x2x5x4xf64>, tensor<2x2x3x3x3x2xf64> -> tensor<2x2x3x2x3x3xf64>
  return %0 : tensor<2x2x3x2x3x3xf64>
}

// No images for the per-task weights: a zero gradient.
func.func @conv2d_backward_weight_no_images(%x: tensor<2x0x1x3x3xf64>, %g: tensor<2x0x2x2x2xf64>) -> tensor<2x2x1x2x2xf64> {
  %0 = nn.conv2d_backward_weight %x, %g stride [1, 1] padding [0, 0] : tensor<2x0x1x3x3xf64>, tensor<2x0x2x2x2xf64> -> tensor<2x2x1x2x2xf64>
  return %0 : tensor<2x2x1x2x2xf64>
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

// step(x) is 0 or 1: the forward pass over ties, with a kernel of 3x2.
func.func @max_pool2d_ties(%x: tensor<2x3x7x6xf64>) -> tensor<2x3x4x7xf64> {
  %s = nn.step %x : tensor<2x3x7x6xf64>
  %0 = nn.max_pool2d %s kernel [3, 2] stride [2, 1] padding [1, 1] : tensor<2x3x7x6xf64> -> tensor<2x3x4x7xf64>
  return %0 : tensor<2x3x4x7xf64>
}

func.func @max_pool2d_backward_overlapping(%x: tensor<3x6x6xf64>, %g: tensor<3x6x6xf64>) -> tensor<3x6x6xf64> {
  %s = nn.step %x : tensor<3x6x6xf64>
  %0 = nn.max_pool2d_backward %s, %g kernel [3, 3] stride [1, 1] padding [1, 1] : tensor<3x6x6xf64>, tensor<3x6x6xf64> -> tensor<3x6x6xf64>
  return %0 : tensor<3x6x6xf64>
}

// Tiled windows (kernel = stride, no padding) whose last rows and columns
// lie past the last window: their derivative is zero there. Ties (step)
// pick the first maximum.
func.func @max_pool2d_backward_tiled_remainder(%x: tensor<2x3x7x5xf64>, %g: tensor<2x3x3x2xf64>) -> tensor<2x3x7x5xf64> {
  %0 = nn.max_pool2d_backward %x, %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<2x3x7x5xf64>, tensor<2x3x3x2xf64> -> tensor<2x3x7x5xf64>
  return %0 : tensor<2x3x7x5xf64>
}

func.func @max_pool2d_backward_tiled_three(%x: tensor<2x8x7xf64>, %g: tensor<2x2x2xf64>) -> tensor<2x8x7xf64> {
  %s = nn.step %x : tensor<2x8x7xf64>
  %0 = nn.max_pool2d_backward %s, %g kernel [3, 3] stride [3, 3] padding [0, 0] : tensor<2x8x7xf64>, tensor<2x2x2xf64> -> tensor<2x8x7xf64>
  return %0 : tensor<2x8x7xf64>
}

func.func @avg_pool2d_overlapping(%x: tensor<2x2x5x7xf64>) -> tensor<2x2x5x4xf64> {
  %0 = nn.avg_pool2d %x kernel [3, 3] stride [1, 2] padding [1, 1] : tensor<2x2x5x7xf64> -> tensor<2x2x5x4xf64>
  return %0 : tensor<2x2x5x4xf64>
}

func.func @avg_pool2d_backward_overlapping(%g: tensor<2x2x5x4xf64>) -> tensor<2x2x5x7xf64> {
  %0 = nn.avg_pool2d_backward %g kernel [3, 3] stride [1, 2] padding [1, 1] : tensor<2x2x5x4xf64> -> tensor<2x2x5x7xf64>
  return %0 : tensor<2x2x5x7xf64>
}

func.func @max_pool2d_gather_strided(%x: tensor<2x2x8x8xf64>, %s: tensor<2x2x8x8xf64>) -> tensor<2x2x3x3xf64> {
  %0 = nn.max_pool2d_gather %x, %s kernel [2, 2] stride [3, 3] padding [0, 0] : tensor<2x2x8x8xf64>, tensor<2x2x8x8xf64> -> tensor<2x2x3x3xf64>
  return %0 : tensor<2x2x3x3xf64>
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

// No reduced dimensions: every element is its own mean, the result the bias.
func.func @batch_norm_no_reduction(%x: tensor<3x4xf64>, %w: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<3x4xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 1 reduce [] epsilon 1.0e-05 : tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64> -> tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

// Statistics over the task dimension that also indexes the weights.
func.func @batch_norm_reduce_weight_batch(%x: tensor<2x5x3xf64>, %w: tensor<2x3xf64>, %b: tensor<2x3xf64>) -> tensor<2x5x3xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 2 reduce [0, 1] epsilon 1.0e-03 : tensor<2x5x3xf64>, tensor<2x3xf64>, tensor<2x3xf64> -> tensor<2x5x3xf64>
  return %0 : tensor<2x5x3xf64>
}

// Non-adjacent reduced dimensions around the channel, and a kept last one.
func.func @batch_norm_interleaved(%x: tensor<3x4x2x5xf64> {metac.eval.min = 2.0 : f64, metac.eval.max = 3.0 : f64}, %w: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<3x4x2x5xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 1 reduce [0, 2] epsilon 1.0e-05 : tensor<3x4x2x5xf64>, tensor<4xf64>, tensor<4xf64> -> tensor<3x4x2x5xf64>
  return %0 : tensor<3x4x2x5xf64>
}

func.func @layer_norm_two_batch_dims(%x: tensor<2x3x4x7xf64>, %w: tensor<2x3x7xf64>, %b: tensor<2x3x7xf64>) -> tensor<2x3x4x7xf64> {
  %0 = nn.layer_norm %x, %w, %b epsilon 1.0e-05 : tensor<2x3x4x7xf64>, tensor<2x3x7xf64>, tensor<2x3x7xf64> -> tensor<2x3x4x7xf64>
  return %0 : tensor<2x3x4x7xf64>
}

func.func @softmax_middle_axis(%x: tensor<2x7x3x4xf64> {metac.eval.min = -4.0 : f64, metac.eval.max = 4.0 : f64}) -> tensor<2x7x3x4xf64> {
  %0 = nn.softmax %x axis 1 : tensor<2x7x3x4xf64>
  return %0 : tensor<2x7x3x4xf64>
}

func.func @log_softmax_first_axis(%x: tensor<5x6xf64> {metac.eval.min = -4.0 : f64, metac.eval.max = 4.0 : f64}) -> tensor<5x6xf64> {
  %0 = nn.log_softmax %x axis 0 : tensor<5x6xf64>
  return %0 : tensor<5x6xf64>
}

//===----------------------------------------------------------------------===//
// Shape manipulation and reductions
//===----------------------------------------------------------------------===//

func.func @transpose_inner_pairs(%x: tensor<2x3x4x5xf64>) -> tensor<2x4x3x5xf64> {
  %0 = nn.transpose %x [0, 2, 1, 3] : tensor<2x3x4x5xf64> -> tensor<2x4x3x5xf64>
  return %0 : tensor<2x4x3x5xf64>
}

// The last two dimensions swapped: copied in 32 x 32 tiles (edges that are
// not whole tiles, a batch of them, one matrix alone, and one large enough
// to split over the loop threads).
func.func @transpose_tiles_batched(%x: tensor<3x37x45xf64>) -> tensor<3x45x37xf64> {
  %0 = nn.transpose %x [0, 2, 1] : tensor<3x37x45xf64> -> tensor<3x45x37xf64>
  return %0 : tensor<3x45x37xf64>
}

func.func @transpose_tiles_matrix(%x: tensor<9x70xf64>) -> tensor<70x9xf64> {
  %0 = nn.transpose %x [1, 0] : tensor<9x70xf64> -> tensor<70x9xf64>
  return %0 : tensor<70x9xf64>
}

func.func @transpose_tiles_inner_of_four(%x: tensor<2x3x33x40xf64>) -> tensor<2x3x40x33xf64> {
  %0 = nn.transpose %x [0, 1, 3, 2] : tensor<2x3x33x40xf64> -> tensor<2x3x40x33xf64>
  return %0 : tensor<2x3x40x33xf64>
}

func.func @transpose_tiles_large(%x: tensor<2x256x300xf64>) -> tensor<2x300x256xf64> {
  %0 = nn.transpose %x [0, 2, 1] : tensor<2x256x300xf64> -> tensor<2x300x256xf64>
  return %0 : tensor<2x300x256xf64>
}

func.func @transpose_reverse(%x: tensor<2x3x4x5xf64>) -> tensor<5x4x3x2xf64> {
  %0 = nn.transpose %x [3, 2, 1, 0] : tensor<2x3x4x5xf64> -> tensor<5x4x3x2xf64>
  return %0 : tensor<5x4x3x2xf64>
}

// Unit dimensions and an identity on the merged rest.
func.func @transpose_unit_dims(%x: tensor<1x3x1x4xf64>) -> tensor<3x4x1x1xf64> {
  %0 = nn.transpose %x [1, 3, 0, 2] : tensor<1x3x1x4xf64> -> tensor<3x4x1x1xf64>
  return %0 : tensor<3x4x1x1xf64>
}

func.func @broadcast_interleaved(%x: tensor<2x3xf64>) -> tensor<4x2x5x3x6xf64> {
  %0 = nn.broadcast %x dims [0, 2, 4] : tensor<2x3xf64> -> tensor<4x2x5x3x6xf64>
  return %0 : tensor<4x2x5x3x6xf64>
}

func.func @reduce_sum_interleaved(%x: tensor<3x4x5x6xf64>) -> tensor<4x6xf64> {
  %0 = nn.reduce_sum %x dims [0, 2] : tensor<3x4x5x6xf64> -> tensor<4x6xf64>
  return %0 : tensor<4x6xf64>
}

func.func @reduce_sum_last(%x: tensor<3x4x5xf64>) -> tensor<3x4xf64> {
  %0 = nn.reduce_sum %x dims [2] : tensor<3x4x5xf64> -> tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

func.func @reduce_mean_inner_pair(%x: tensor<3x4x5x6xf64>) -> tensor<3x6xf64> {
  %0 = nn.reduce_mean %x dims [1, 2] : tensor<3x4x5x6xf64> -> tensor<3x6xf64>
  return %0 : tensor<3x6xf64>
}

// A mean over an empty dimension is 0 / 0.
func.func @reduce_mean_empty(%x: tensor<3x0xf64>) -> tensor<3xf64> {
  %0 = nn.reduce_mean %x dims [1] : tensor<3x0xf64> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

//===----------------------------------------------------------------------===//
// Losses and indexing
//===----------------------------------------------------------------------===//

func.func @mse_loss_batch_rank3(%p: tensor<2x3x4x5xf64>, %t: tensor<2x3x4x5xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.mse_loss %p, %t {batch_rank = 3 : i64} : tensor<2x3x4x5xf64>, tensor<2x3x4x5xf64> -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

func.func @cross_entropy_loss_confident(%l: tensor<3x8x10xf64> {metac.eval.min = -30.0 : f64, metac.eval.max = 30.0 : f64}, %y: tensor<3x8xi32> {metac.eval.max = 10 : i64}) -> tensor<3xf64> {
  %0 = nn.cross_entropy_loss %l, %y {batch_rank = 1 : i64} : tensor<3x8x10xf64>, tensor<3x8xi32> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

func.func @accuracy_positions(%l: tensor<3x8x6x10xf64>, %y: tensor<3x8x6xi32> {metac.eval.max = 10 : i64}) -> tensor<3xf64> {
  %0 = nn.accuracy %l, %y {batch_rank = 1 : i64} : tensor<3x8x6x10xf64>, tensor<3x8x6xi32> -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// Ties go to the first largest logit: every row of ones predicts class 0.
func.func @accuracy_ties(%y: tensor<12xi64> {metac.eval.max = 3 : i64}) -> tensor<f64> {
  %l = arith.constant dense<1.0> : tensor<12x3xf64>
  %0 = nn.accuracy %l, %y : tensor<12x3xf64>, tensor<12xi64> -> tensor<f64>
  return %0 : tensor<f64>
}

func.func @embedding_two_batch_dims(%ids: tensor<2x3x4xi32> {metac.eval.max = 6 : i64}, %t: tensor<2x3x6x5xf64>) -> tensor<2x3x4x5xf64> {
  %0 = nn.embedding %ids, %t : tensor<2x3x4xi32>, tensor<2x3x6x5xf64> -> tensor<2x3x4x5xf64>
  return %0 : tensor<2x3x4x5xf64>
}

// Few rows for many ids: every row accumulates several gradients.
func.func @embedding_backward_repeated(%ids: tensor<2x3x8xi64> {metac.eval.max = 3 : i64}, %g: tensor<2x3x8x4xf64>) -> tensor<2x3x4xf64> {
  %0 = nn.embedding_backward %ids, %g : tensor<2x3x8xi64>, tensor<2x3x8x4xf64> -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

// Ids beyond the table: both the interpreter and the runtime must refuse.
func.func @embedding_out_of_range(%ids: tensor<20xi64> {metac.eval.max = 100 : i64}, %t: tensor<3x2xf64>) -> tensor<20x2xf64> {
  %0 = nn.embedding %ids, %t : tensor<20xi64>, tensor<3x2xf64> -> tensor<20x2xf64>
  return %0 : tensor<20x2xf64>
}

func.func @cross_entropy_loss_negative_label(%l: tensor<20x3xf64>, %y: tensor<20xi32> {metac.eval.min = -5 : i64, metac.eval.max = 3 : i64}) -> tensor<f64> {
  %0 = nn.cross_entropy_loss %l, %y : tensor<20x3xf64>, tensor<20xi32> -> tensor<f64>
  return %0 : tensor<f64>
}

// Constants: non-splat ids are copied, splat floats and ids filled.
func.func @constants(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %labels = arith.constant dense<[3, 0, 2]> : tensor<3xi64>
  %ones = arith.constant dense<1> : tensor<3xi32>
  %half = arith.constant dense<0.5> : tensor<3x4xf64>
  %hot = nn.one_hot %labels : tensor<3xi64> -> tensor<3x4xf64>
  %second = nn.one_hot %ones : tensor<3xi32> -> tensor<3x4xf64>
  %0 = nn.mul %hot, %half : tensor<3x4xf64>
  %1 = nn.add %0, %second : tensor<3x4xf64>
  %2 = nn.add %1, %x : tensor<3x4xf64>
  return %2 : tensor<3x4xf64>
}

//===----------------------------------------------------------------------===//
// Loops large enough to be split over the CPU backend's threads (at least
// 2 x 8192 elements): each thread's ranges must give what one thread does.
//===----------------------------------------------------------------------===//

func.func @parallel_elementwise(%x: tensor<5x4001xf64>, %y: tensor<5x4001xf64> {metac.eval.min = 0.5 : f64, metac.eval.max = 2.0 : f64}) -> tensor<5x4001xf64> {
  %0 = nn.div %x, %y : tensor<5x4001xf64>
  %1 = nn.tanh %0 : tensor<5x4001xf64>
  %2 = nn.scale %1 by 3.0 : tensor<5x4001xf64>
  %3 = nn.sub %2, %x : tensor<5x4001xf64>
  return %3 : tensor<5x4001xf64>
}

// The outer dimension kept (split), and reduced (one thread).
func.func @parallel_reductions(%x: tensor<12x7x9x31xf64>) -> (tensor<12x31xf64>, tensor<7x9x31xf64>, tensor<f64>) {
  %0 = nn.reduce_sum %x dims [1, 2] : tensor<12x7x9x31xf64> -> tensor<12x31xf64>
  %1 = nn.reduce_mean %x dims [0] : tensor<12x7x9x31xf64> -> tensor<7x9x31xf64>
  %2 = nn.reduce_sum %x dims [0, 1, 2, 3] : tensor<12x7x9x31xf64> -> tensor<f64>
  return %0, %1, %2 : tensor<12x31xf64>, tensor<7x9x31xf64>, tensor<f64>
}

func.func @parallel_copies(%x: tensor<6x11x13x23xf64>, %v: tensor<7x3xf64>) -> (tensor<23x13x11x6xf64>, tensor<7x900x3xf64>) {
  %0 = nn.transpose %x [3, 2, 1, 0] : tensor<6x11x13x23xf64> -> tensor<23x13x11x6xf64>
  %1 = nn.broadcast %v dims [1] : tensor<7x3xf64> -> tensor<7x900x3xf64>
  return %0, %1 : tensor<23x13x11x6xf64>, tensor<7x900x3xf64>
}

// Batch norm of a batched ConvNet activation: [tasks, samples, C, H, W].
func.func @parallel_batch_norm(%x: tensor<3x10x8x14x14xf64>, %w: tensor<3x8xf64>, %b: tensor<3x8xf64>) -> tensor<3x10x8x14x14xf64> {
  %0 = nn.batch_norm %x, %w, %b channel 2 reduce [1, 3, 4] epsilon 1.0e-05 : tensor<3x10x8x14x14xf64>, tensor<3x8xf64>, tensor<3x8xf64> -> tensor<3x10x8x14x14xf64>
  return %0 : tensor<3x10x8x14x14xf64>
}

func.func @parallel_max_pool(%x: tensor<4x9x16x28x28xf64>, %g: tensor<4x9x16x14x14xf64>) -> (tensor<4x9x16x14x14xf64>, tensor<4x9x16x28x28xf64>) {
  %0 = nn.max_pool2d %x kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<4x9x16x28x28xf64> -> tensor<4x9x16x14x14xf64>
  %1 = nn.max_pool2d_backward %x, %g kernel [2, 2] stride [2, 2] padding [0, 0] : tensor<4x9x16x28x28xf64>, tensor<4x9x16x14x14xf64> -> tensor<4x9x16x28x28xf64>
  return %0, %1 : tensor<4x9x16x14x14xf64>, tensor<4x9x16x28x28xf64>
}
