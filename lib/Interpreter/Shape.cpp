//===- Shape.cpp - shape manipulation and reductions in the interpreter ---===//
//
// `nn.reshape` (row-major), `nn.transpose`, `nn.broadcast` (new dimensions
// at the listed result positions) and the reductions `nn.reduce_sum` and
// `nn.reduce_mean`.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

using namespace mlir;

namespace metac::interp::detail {

FailureOr<Tensor> evaluateOp(nn::ReshapeOp op, const Frame &frame) {
  Tensor y = frame.get(op.getInput());
  ArrayRef<int64_t> shape = shapeOf(op.getResult());
  y.shape.assign(shape.begin(), shape.end());
  return y;
}

FailureOr<Tensor> evaluateOp(nn::TransposeOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  ArrayRef<int64_t> permutation = op.getPermutation();
  Tensor y = zeros(shapeOf(op.getResult()));
  // Result dimension d is input dimension permutation[d].
  SmallVector<int64_t> inputIndex(x.shape.size());
  forEachIndex(y.shape, [&](ArrayRef<int64_t> index, int64_t flat) {
    for (auto [d, i] : llvm::enumerate(index))
      inputIndex[permutation[d]] = i;
    y.values[flat] = x.values[flatIndex(x.shape, inputIndex)];
  });
  return y;
}

FailureOr<Tensor> evaluateOp(nn::BroadcastOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  Tensor y = zeros(shapeOf(op.getResult()));
  forEachIndex(y.shape, [&](ArrayRef<int64_t> index, int64_t flat) {
    y.values[flat] =
        x.values[flatIndex(x.shape, dropDims(index, op.getDimensions()))];
  });
  return y;
}

/// The sum of `value` over `dims`, which disappear from the result.
static Tensor reduceSum(const Frame &frame, Value value, ArrayRef<int64_t> dims,
                        ArrayRef<int64_t> resultShape) {
  const Tensor &x = frame.get(value);
  Tensor y = zeros(resultShape);
  forEachIndex(x.shape, [&](ArrayRef<int64_t> index, int64_t flat) {
    y.values[flatIndex(y.shape, dropDims(index, dims))] += x.values[flat];
  });
  return y;
}

FailureOr<Tensor> evaluateOp(nn::ReduceSumOp op, const Frame &frame) {
  return reduceSum(frame, op.getInput(), op.getDimensions(),
                   shapeOf(op.getResult()));
}

FailureOr<Tensor> evaluateOp(nn::ReduceMeanOp op, const Frame &frame) {
  Tensor y = reduceSum(frame, op.getInput(), op.getDimensions(),
                       shapeOf(op.getResult()));
  ArrayRef<int64_t> inputShape = shapeOf(op.getInput());
  int64_t count = 1;
  for (int64_t d : op.getDimensions())
    count *= inputShape[d];
  for (double &value : y.values)
    value /= count;
  return y;
}

} // namespace metac::interp::detail
