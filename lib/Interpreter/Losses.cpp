//===- Losses.cpp - losses in the interpreter -----------------------------===//
//
// `nn.mse_loss`, `nn.cross_entropy_loss` and `nn.accuracy`: a mean over
// every dimension after the leading `batch_rank` ones, which the result keeps.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace metac::interp::detail {

FailureOr<Tensor> evaluateOp(nn::MSELossOp op, const Frame &frame) {
  const Tensor &prediction = frame.get(op.getPrediction());
  const Tensor &target = frame.get(op.getTarget());
  Tensor y = zeros(shapeOf(op.getResult()));
  // Row-major, the elements of batch entry b are [b * n, (b + 1) * n).
  int64_t n = product(
      ArrayRef<int64_t>(prediction.shape).drop_front(op.getBatchRank()));
  for (int64_t b = 0, e = y.numElements(); b < e; ++b) {
    double sum = 0.0;
    for (int64_t i = b * n; i < (b + 1) * n; ++i) {
      double difference = prediction.values[i] - target.values[i];
      sum += difference * difference;
    }
    y.values[b] = sum / n;
  }
  return y;
}

FailureOr<Tensor> evaluateOp(nn::CrossEntropyLossOp op, const Frame &frame) {
  const Tensor &logits = frame.get(op.getLogits());
  const Tensor &labels = frame.get(op.getLabels());
  Tensor y = zeros(shapeOf(op.getResult()));
  int64_t classes = logits.shape.back();
  // Sample positions of batch entry b: [b * n, (b + 1) * n), row-major.
  int64_t n =
      product(ArrayRef<int64_t>(labels.shape).drop_front(op.getBatchRank()));
  for (int64_t b = 0, e = y.numElements(); b < e; ++b) {
    double sum = 0.0;
    for (int64_t s = b * n; s < (b + 1) * n; ++s) {
      int64_t label = labels.ints[s];
      if (failed(checkIndex(op, "label", label, classes)))
        return failure();
      // With m the row's maximum, -log_softmax(row)[label] is
      //   log(sum_c exp(row[c] - m)) - (row[label] - m),
      // subtracting m from row[label] first so that the loss of a confident,
      // correct prediction (close to 0) keeps its precision.
      const double *row = &logits.values[s * classes];
      double maximum = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < classes; ++c)
        maximum = std::max(maximum, row[c]);
      double exponentials = 0.0;
      for (int64_t c = 0; c < classes; ++c)
        exponentials += std::exp(row[c] - maximum);
      sum += std::log(exponentials) - (row[label] - maximum);
    }
    y.values[b] = sum / n;
  }
  return y;
}

FailureOr<Tensor> evaluateOp(nn::AccuracyOp op, const Frame &frame) {
  const Tensor &logits = frame.get(op.getLogits());
  const Tensor &labels = frame.get(op.getLabels());
  Tensor y = zeros(shapeOf(op.getResult()));
  int64_t classes = logits.shape.back();
  int64_t n =
      product(ArrayRef<int64_t>(labels.shape).drop_front(op.getBatchRank()));
  for (int64_t b = 0, e = y.numElements(); b < e; ++b) {
    int64_t correct = 0;
    for (int64_t s = b * n; s < (b + 1) * n; ++s) {
      int64_t label = labels.ints[s];
      if (failed(checkIndex(op, "label", label, classes)))
        return failure();
      const double *row = &logits.values[s * classes];
      // The first maximum wins ties, as torch.argmax.
      int64_t best = 0;
      for (int64_t c = 1; c < classes; ++c)
        if (row[c] > row[best])
          best = c;
      correct += best == label;
    }
    y.values[b] = static_cast<double>(correct) / n;
  }
  return y;
}

} // namespace metac::interp::detail
