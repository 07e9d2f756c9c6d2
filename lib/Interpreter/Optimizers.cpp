//===- Optimizers.cpp - meta.outer_step, PyTorch's update rules -----------===//
//
// torch.optim.SGD (momentum, weight decay; no dampening or Nesterov),
// torch.optim.Adam (L2 weight decay added to the gradient) and
// torch.optim.AdamW (decoupled weight decay), written as PyTorch does them so
// that reference comparisons agree to rounding.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"

#include <cmath>

using namespace mlir;
using namespace metac;
using namespace metac::interp;
using metac::interp::detail::Frame;

FailureOr<std::vector<Tensor>>
metac::interp::detail::evaluateOuterStep(meta::OuterStepOp op,
                                         const Frame &frame) {
  size_t n = op.getParams().size();
  std::vector<Tensor> params, state;
  for (Value p : op.getParams())
    params.push_back(frame.get(p));
  for (Value s : op.getState())
    state.push_back(frame.get(s));
  auto grad = [&](size_t i) -> const Tensor & {
    return frame.get(op.getGrads()[i]);
  };
  Attribute optimizer = op.getOptimizer();

  if (auto sgd = dyn_cast<meta::SGDAttr>(optimizer)) {
    double lr = sgd.getLr().convertToDouble();
    double momentum = sgd.getMomentum().convertToDouble();
    double decay = sgd.getWeightDecay().convertToDouble();
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> &p = params[i].values;
      const std::vector<double> &g = grad(i).values;
      for (size_t e = 0; e < p.size(); ++e) {
        double d = g[e] + decay * p[e];
        if (momentum != 0) {
          double &buffer = state[i].values[e];
          buffer = momentum * buffer + d;
          d = buffer;
        }
        p[e] -= lr * d;
      }
    }
  } else {
    bool decoupled = isa<meta::AdamWAttr>(optimizer);
    auto read = [&](auto adam) {
      return std::array<double, 5>{
          adam.getLr().convertToDouble(), adam.getBeta1().convertToDouble(),
          adam.getBeta2().convertToDouble(), adam.getEps().convertToDouble(),
          adam.getWeightDecay().convertToDouble()};
    };
    auto [lr, beta1, beta2, eps, decay] =
        decoupled ? read(cast<meta::AdamWAttr>(optimizer))
                  : read(cast<meta::AdamAttr>(optimizer));
    int64_t step = state.back().ints.front() + 1;
    state.back().ints.front() = step;
    double correction1 = 1 - std::pow(beta1, static_cast<double>(step));
    double correction2 = 1 - std::pow(beta2, static_cast<double>(step));
    for (size_t i = 0; i < n; ++i) {
      std::vector<double> &p = params[i].values;
      std::vector<double> &m = state[i].values;
      std::vector<double> &v = state[n + i].values;
      const std::vector<double> &g = grad(i).values;
      for (size_t e = 0; e < p.size(); ++e) {
        double d = g[e];
        if (decoupled)
          p[e] *= 1 - lr * decay;
        else
          d += decay * p[e];
        m[e] = beta1 * m[e] + (1 - beta1) * d;
        v[e] = beta2 * v[e] + (1 - beta2) * d * d;
        double denominator = std::sqrt(v[e]) / std::sqrt(correction2) + eps;
        p[e] -= lr / correction1 * m[e] / denominator;
      }
    }
  }
  std::vector<Tensor> results = std::move(params);
  for (Tensor &s : state)
    results.push_back(std::move(s));
  return results;
}
