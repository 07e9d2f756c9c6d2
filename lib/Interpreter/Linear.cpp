//===- Linear.cpp - affine layers and matrix products in the interpreter --===//
//
// `nn.linear` with weights batched over a prefix of the input's leading
// dimensions, and `nn.matmul` with its transpose flags.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

using namespace mlir;

namespace metac::interp::detail {

FailureOr<Tensor> evaluateOp(nn::LinearOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  const Tensor &w = frame.get(op.getWeight());
  const Tensor *bias = op.getBias() ? &frame.get(op.getBias()) : nullptr;
  int64_t in = x.shape.back(), out = w.shape[w.shape.size() - 2];
  int64_t weightBatch = w.shape.size() - 2;
  ArrayRef<int64_t> leading = ArrayRef<int64_t>(x.shape).drop_back();
  int64_t rows = product(leading);
  // Rows are row-major over B...; the weight's P... is a prefix of B..., so
  // row r uses weight slice r / (product of the B dimensions after P).
  int64_t rowsPerWeight = product(leading.drop_front(weightBatch));
  Tensor y = zeros(shapeOf(op.getResult()));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t p = r / rowsPerWeight;
    for (int64_t o = 0; o < out; ++o) {
      double sum = bias ? bias->values[p * out + o] : 0.0;
      for (int64_t i = 0; i < in; ++i)
        sum += x.values[r * in + i] * w.values[(p * out + o) * in + i];
      y.values[r * out + o] = sum;
    }
  }
  return y;
}

FailureOr<Tensor> evaluateOp(nn::MatmulOp op, const Frame &frame) {
  const Tensor &a = frame.get(op.getLhs());
  const Tensor &b = frame.get(op.getRhs());
  bool transposeLhs = op.getTransposeLhs(), transposeRhs = op.getTransposeRhs();
  ArrayRef<int64_t> resultShape = shapeOf(op.getResult());
  size_t rank = resultShape.size();
  int64_t batch = product(resultShape.drop_back(2));
  int64_t m = resultShape[rank - 2], n = resultShape[rank - 1];
  int64_t k = transposeLhs ? a.shape[rank - 2] : a.shape[rank - 1];
  // Element (i, c) of the product's left factor, read from `lhs` ([m, k] or,
  // transposed, [k, m]), and element (c, j) of its right factor, read from
  // `rhs` ([k, n] or [n, k]).
  auto lhsAt = [&](int64_t s, int64_t i, int64_t c) {
    return a.values[s * m * k + (transposeLhs ? c * m + i : i * k + c)];
  };
  auto rhsAt = [&](int64_t s, int64_t c, int64_t j) {
    return b.values[s * k * n + (transposeRhs ? j * k + c : c * n + j)];
  };
  Tensor y = zeros(resultShape);
  for (int64_t s = 0; s < batch; ++s)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0.0;
        for (int64_t c = 0; c < k; ++c)
          sum += lhsAt(s, i, c) * rhsAt(s, c, j);
        y.values[(s * m + i) * n + j] = sum;
      }
  return y;
}

} // namespace metac::interp::detail
