//===- Attention.cpp - the reference of nn.attention ----------------------===//
//
// Row by row in f64: the scores of a query against every key it may see,
// their softmax (the largest score subtracted first) and the weighted sum
// of the values. The direct formula, against which the runtime's tiled,
// online-softmax kernel is checked.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace mlir;

namespace metac::interp::detail {

FailureOr<Tensor> evaluateOp(nn::AttentionOp op, const Frame &frame) {
  const Tensor &q = frame.get(op.getQuery());
  const Tensor &k = frame.get(op.getKey());
  const Tensor &v = frame.get(op.getValue());
  ArrayRef<int64_t> resultShape = shapeOf(op.getResult());
  size_t rank = resultShape.size();
  int64_t batch = product(resultShape.drop_back(2));
  int64_t length = q.shape[rank - 2], width = q.shape[rank - 1];
  int64_t keys = k.shape[rank - 2], values = v.shape[rank - 1];
  double scale = op.getScale().convertToDouble();
  bool causal = op.getCausal();
  Tensor y = zeros(resultShape);
  std::vector<double> scores(keys);
  for (int64_t s = 0; s < batch; ++s) {
    const double *qs = q.values.data() + s * length * width;
    const double *ks = k.values.data() + s * keys * width;
    const double *vs = v.values.data() + s * keys * values;
    double *ys = y.values.data() + s * length * values;
    for (int64_t i = 0; i < length; ++i) {
      int64_t seen = causal ? std::min(i + 1, keys) : keys;
      double largest = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < seen; ++j) {
        double dot = 0;
        for (int64_t c = 0; c < width; ++c)
          dot += qs[i * width + c] * ks[j * width + c];
        scores[j] = scale * dot;
        largest = std::max(largest, scores[j]);
      }
      double total = 0;
      for (int64_t j = 0; j < seen; ++j) {
        scores[j] = std::exp(scores[j] - largest);
        total += scores[j];
      }
      for (int64_t j = 0; j < seen; ++j)
        for (int64_t e = 0; e < values; ++e)
          ys[i * values + e] += scores[j] / total * vs[j * values + e];
    }
  }
  return y;
}

} // namespace metac::interp::detail
