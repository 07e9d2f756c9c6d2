//===- Attention.cpp - the reference of nn.attention and its derivative ---===//
//
// Row by row in f64: the scores of a query against every key it may see,
// their softmax (the largest score subtracted first) and the weighted sum
// of the values; for the derivative, the same probabilities P, dP = dy v^T
// and dS = P (dP - rowsum(P dP)) contracted into the requested cotangent;
// for its derivative, the chain rule through those written out per query
// (the runtime's kernel sums the same terms online over tiles).
// The direct formulas, against which the runtime's tiled kernels are
// checked.
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

namespace {

/// Attentions, queries, their width, keys and the values' width.
struct Sizes {
  int64_t batch, length, width, keys, values;
};
Sizes sizesOf(const Tensor &q, const Tensor &k, const Tensor &v) {
  size_t rank = q.shape.size();
  return {product(ArrayRef<int64_t>(q.shape).drop_back(2)), q.shape[rank - 2],
          q.shape[rank - 1], k.shape[rank - 2], v.shape[rank - 1]};
}

/// The softmax probabilities of query `i` over the `seen` keys it may see.
void rowProbabilities(const double *q, const double *k, int64_t width,
                      int64_t seen, double scale, std::vector<double> &p) {
  double largest = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < seen; ++j) {
    double dot = 0;
    for (int64_t c = 0; c < width; ++c)
      dot += q[c] * k[j * width + c];
    p[j] = scale * dot;
    largest = std::max(largest, p[j]);
  }
  double total = 0;
  for (int64_t j = 0; j < seen; ++j) {
    p[j] = std::exp(p[j] - largest);
    total += p[j];
  }
  for (int64_t j = 0; j < seen; ++j)
    p[j] /= total;
}

} // namespace

FailureOr<Tensor> evaluateOp(nn::AttentionBackwardOp op, const Frame &frame) {
  const Tensor &q = frame.get(op.getQuery());
  const Tensor &k = frame.get(op.getKey());
  const Tensor &v = frame.get(op.getValue());
  const Tensor &dy = frame.get(op.getGrad());
  auto [batch, length, width, keys, values] = sizesOf(q, k, v);
  double scale = op.getScale().convertToDouble();
  bool causal = op.getCausal();
  StringRef wrt = op.getWrt();
  Tensor result = zeros(shapeOf(op.getResult()));
  std::vector<double> p(keys), dp(keys);
  for (int64_t s = 0; s < batch; ++s) {
    const double *qs = q.values.data() + s * length * width;
    const double *ks = k.values.data() + s * keys * width;
    const double *vs = v.values.data() + s * keys * values;
    const double *dys = dy.values.data() + s * length * values;
    double *rs = result.values.data() +
                 s * (wrt == "query" ? length * width
                                     : keys * (wrt == "key" ? width : values));
    for (int64_t i = 0; i < length; ++i) {
      int64_t seen = causal ? std::min(i + 1, keys) : keys;
      rowProbabilities(qs + i * width, ks, width, seen, scale, p);
      const double *dyi = dys + i * values;
      if (wrt == "value") {
        for (int64_t j = 0; j < seen; ++j)
          for (int64_t e = 0; e < values; ++e)
            rs[j * values + e] += p[j] * dyi[e];
        continue;
      }
      double d = 0;
      for (int64_t j = 0; j < seen; ++j) {
        dp[j] = 0;
        for (int64_t e = 0; e < values; ++e)
          dp[j] += dyi[e] * vs[j * values + e];
        d += p[j] * dp[j];
      }
      for (int64_t j = 0; j < seen; ++j) {
        double ds = scale * p[j] * (dp[j] - d);
        for (int64_t c = 0; c < width; ++c) {
          if (wrt == "query")
            rs[i * width + c] += ds * ks[j * width + c];
          else
            rs[j * width + c] += ds * qs[i * width + c];
        }
      }
    }
  }
  return result;
}

FailureOr<Tensor> evaluateOp(nn::AttentionDoubleBackwardOp op,
                             const Frame &frame) {
  const Tensor &q = frame.get(op.getQuery());
  const Tensor &k = frame.get(op.getKey());
  const Tensor &v = frame.get(op.getValue());
  const Tensor &dy = frame.get(op.getGrad());
  const Tensor &g = frame.get(op.getCotangent());
  auto [batch, length, width, keys, values] = sizesOf(q, k, v);
  double scale = op.getScale().convertToDouble();
  bool causal = op.getCausal();
  StringRef from = op.getFrom(), wrt = op.getWrt();
  Tensor result = zeros(shapeOf(op.getResult()));
  int64_t resultSize = product(shapeOf(op.getResult())) / batch;
  int64_t gSize = product(ArrayRef<int64_t>(g.shape)) / batch;
  std::vector<double> p(keys), dp(keys), dsBar(keys), pBar(keys);
  for (int64_t s = 0; s < batch; ++s) {
    const double *qs = q.values.data() + s * length * width;
    const double *ks = k.values.data() + s * keys * width;
    const double *vs = v.values.data() + s * keys * values;
    const double *dys = dy.values.data() + s * length * values;
    const double *gs = g.values.data() + s * gSize;
    double *rs = result.values.data() + s * resultSize;
    auto dot = [](const double *a, const double *b, int64_t n) {
      double sum = 0;
      for (int64_t c = 0; c < n; ++c)
        sum += a[c] * b[c];
      return sum;
    };
    for (int64_t i = 0; i < length; ++i) {
      int64_t seen = causal ? std::min(i + 1, keys) : keys;
      rowProbabilities(qs + i * width, ks, width, seen, scale, p);
      const double *qi = qs + i * width, *dyi = dys + i * values;
      double d = 0, dBar = 0;
      for (int64_t j = 0; j < seen; ++j) {
        dp[j] = dot(dyi, vs + j * values, values);
        // The cotangent of dS (dq = scale dS k, dk = scale dS^T q).
        dsBar[j] = from == "query"
                       ? scale * dot(gs + i * width, ks + j * width, width)
                   : from == "key" ? scale * dot(qi, gs + j * width, width)
                                   : 0.0;
        d += p[j] * dp[j];
        dBar -= p[j] * dsBar[j];
      }
      double r = 0;
      for (int64_t j = 0; j < seen; ++j) {
        // The cotangent of P: through dv = P^T dy, dS = P (dP - D) and
        // D = rowsum(P dP).
        double fromValue =
            from == "value" ? dot(dyi, gs + j * values, values) : 0.0;
        pBar[j] = fromValue + dsBar[j] * (dp[j] - d) + dBar * dp[j];
        r += p[j] * pBar[j];
      }
      for (int64_t j = 0; j < seen; ++j) {
        double sBar = p[j] * (pBar[j] - r); // through the softmax
        double dpBar = p[j] * (dsBar[j] + dBar);
        double ds = p[j] * (dp[j] - d);
        if (wrt == "query") {
          for (int64_t c = 0; c < width; ++c)
            rs[i * width + c] +=
                scale * (sBar * ks[j * width + c] +
                         (from == "key" ? ds * gs[j * width + c] : 0.0));
        } else if (wrt == "key") {
          for (int64_t c = 0; c < width; ++c)
            rs[j * width + c] +=
                scale * (sBar * qi[c] +
                         (from == "query" ? ds * gs[i * width + c] : 0.0));
        } else if (wrt == "value") {
          for (int64_t e = 0; e < values; ++e)
            rs[j * values + e] += dpBar * dyi[e];
        } else {
          for (int64_t e = 0; e < values; ++e)
            rs[i * values + e] +=
                dpBar * vs[j * values + e] +
                (from == "value" ? p[j] * gs[j * values + e] : 0.0);
        }
      }
    }
  }
  return result;
}

} // namespace metac::interp::detail
