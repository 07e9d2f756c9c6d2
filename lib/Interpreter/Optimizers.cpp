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

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;
using namespace metac;
using namespace metac::interp;
using metac::interp::detail::Frame;

std::vector<Tensor>
metac::interp::detail::evaluateUpdateGuard(meta::UpdateGuardOp op,
                                           const Frame &frame) {
  Tensor norms{{static_cast<int64_t>(op.getGrads().size())}, {}, {}, false};
  bool finite = std::isfinite(frame.get(op.getLoss()).values.front());
  double total = 0;
  for (Value g : op.getGrads()) {
    double sum = 0;
    for (double v : frame.get(g).values)
      sum += v * v;
    // Past the element type's range, as PyTorch's norm in that type.
    auto type =
        cast<FloatType>(cast<RankedTensorType>(g.getType()).getElementType());
    if (sum >
        llvm::APFloat::getLargest(type.getFloatSemantics()).convertToDouble())
      sum = std::numeric_limits<double>::infinity();
    norms.values.push_back(sum);
    finite = finite && std::isfinite(sum);
    total += sum;
  }
  // torch.nn.utils.clip_grad_norm_: max_norm / (total_norm + 1e-6), at most 1.
  double scale = 1;
  if (std::optional<llvm::APFloat> clip = op.getClipNorm())
    scale = std::min(1.0, clip->convertToDouble() / (std::sqrt(total) + 1e-6));
  Tensor gate{{2}, {finite ? 1.0 : 0.0, scale}, {}, false};
  return {std::move(norms), std::move(gate)};
}

FailureOr<std::vector<Tensor>>
metac::interp::detail::evaluateOuterStep(meta::OuterStepOp op,
                                         const Frame &frame) {
  size_t n = op.getParams().size();
  std::vector<Tensor> params, state;
  for (Value p : op.getParams())
    params.push_back(frame.get(p));
  for (Value s : op.getState())
    state.push_back(frame.get(s));
  std::vector<Tensor> grads;
  for (Value g : op.getGrads())
    grads.push_back(frame.get(g));
  if (Value gateValue = op.getGate()) {
    const std::vector<double> &gate = frame.get(gateValue).values;
    if (gate[0] == 0) { // a skipped update changes nothing
      std::vector<Tensor> results = std::move(params);
      for (Tensor &s : state)
        results.push_back(std::move(s));
      return results;
    }
    for (Tensor &g : grads)
      for (double &v : g.values)
        v *= gate[1];
  }
  auto grad = [&](size_t i) -> const Tensor & { return grads[i]; };
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
