//===- Normalization.cpp - normalisations in the interpreter --------------===//
//
// `nn.batch_norm` (statistics over `reduce_dims`, per index of the other
// dimensions), `nn.layer_norm` (over the last dimension), both with the
// biased variance and epsilon inside the square root, and `nn.softmax` /
// `nn.log_softmax` along an axis, shifted by the maximum for stability.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace metac::interp::detail {

FailureOr<Tensor> evaluateOp(nn::BatchNormOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  const Tensor &weight = frame.get(op.getWeight());
  const Tensor &bias = frame.get(op.getBias());
  ArrayRef<int64_t> reduceDims = op.getReduceDims();
  int64_t channelDim = op.getChannelDim();
  double epsilon = op.getEpsilon().convertToDouble();
  // One mean and variance per index of the dimensions that are not reduced.
  SmallVector<int64_t> statsShape = dropDims(x.shape, reduceDims);
  int64_t count = 1;
  for (int64_t d : reduceDims)
    count *= x.shape[d];
  std::vector<double> mean(product(statsShape), 0.0);
  std::vector<double> variance(mean.size(), 0.0);
  auto statsIndex = [&](ArrayRef<int64_t> index) {
    return flatIndex(statsShape, dropDims(index, reduceDims));
  };
  forEachIndex(x.shape, [&](ArrayRef<int64_t> index, int64_t flat) {
    mean[statsIndex(index)] += x.values[flat];
  });
  for (double &m : mean)
    m /= count;
  forEachIndex(x.shape, [&](ArrayRef<int64_t> index, int64_t flat) {
    int64_t s = statsIndex(index);
    variance[s] += (x.values[flat] - mean[s]) * (x.values[flat] - mean[s]);
  });
  for (double &v : variance)
    v /= count;
  // The weight `[P..., C]` is indexed by the input's first P dimensions and
  // the channel.
  int64_t weightBatch = weight.shape.size() - 1;
  Tensor y = zeros(x.shape);
  forEachIndex(x.shape, [&](ArrayRef<int64_t> index, int64_t flat) {
    SmallVector<int64_t> weightIndex(index.take_front(weightBatch));
    weightIndex.push_back(index[channelDim]);
    int64_t w = flatIndex(weight.shape, weightIndex);
    int64_t s = statsIndex(index);
    double normalized =
        (x.values[flat] - mean[s]) / std::sqrt(variance[s] + epsilon);
    y.values[flat] = weight.values[w] * normalized + bias.values[w];
  });
  return y;
}

FailureOr<Tensor> evaluateOp(nn::LayerNormOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  const Tensor &weight = frame.get(op.getWeight());
  const Tensor &bias = frame.get(op.getBias());
  double epsilon = op.getEpsilon().convertToDouble();
  int64_t d = x.shape.back();
  ArrayRef<int64_t> leading = ArrayRef<int64_t>(x.shape).drop_back();
  int64_t rows = product(leading);
  // Rows are row-major over B...; the weight's P... is a prefix of B....
  int64_t rowsPerWeight = product(leading.drop_front(weight.shape.size() - 1));
  Tensor y = zeros(x.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = &x.values[r * d];
    double mean = 0.0, variance = 0.0;
    for (int64_t i = 0; i < d; ++i)
      mean += row[i];
    mean /= d;
    for (int64_t i = 0; i < d; ++i)
      variance += (row[i] - mean) * (row[i] - mean);
    variance /= d;
    int64_t p = r / rowsPerWeight;
    for (int64_t i = 0; i < d; ++i)
      y.values[r * d + i] = weight.values[p * d + i] * (row[i] - mean) /
                                std::sqrt(variance + epsilon) +
                            bias.values[p * d + i];
  }
  return y;
}

/// The softmax (or, with `logarithm`, the log-softmax) of `value` along
/// `axis`: exp(x - m) / sum exp(x - m), or x - m - log(sum exp(x - m)), with
/// m the maximum along the axis.
static Tensor softmax(const Frame &frame, Value value, int64_t axis,
                      bool logarithm) {
  Tensor y = frame.get(value);
  ArrayRef<int64_t> shape = y.shape;
  int64_t outer = product(shape.take_front(axis)), n = shape[axis];
  int64_t inner = product(shape.drop_front(axis + 1));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t a) -> double & {
        return y.values[(o * n + a) * inner + i];
      };
      double maximum = -std::numeric_limits<double>::infinity();
      for (int64_t a = 0; a < n; ++a)
        maximum = std::max(maximum, at(a));
      double sum = 0.0;
      for (int64_t a = 0; a < n; ++a)
        sum += std::exp(at(a) - maximum);
      for (int64_t a = 0; a < n; ++a)
        at(a) = logarithm ? at(a) - maximum - std::log(sum)
                          : std::exp(at(a) - maximum) / sum;
    }
  return y;
}

FailureOr<Tensor> evaluateOp(nn::SoftmaxOp op, const Frame &frame) {
  return softmax(frame, op.getInput(), op.getAxis(), /*logarithm=*/false);
}

FailureOr<Tensor> evaluateOp(nn::LogSoftmaxOp op, const Frame &frame) {
  return softmax(frame, op.getInput(), op.getAxis(), /*logarithm=*/true);
}

} // namespace metac::interp::detail
