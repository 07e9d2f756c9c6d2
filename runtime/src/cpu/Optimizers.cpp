//===- Optimizers.cpp - outer optimizer updates on the CPU ----------------===//
//
// torch.optim.SGD (momentum, weight decay; no dampening or Nesterov) and
// torch.optim.Adam / AdamW, in the order of operations of PyTorch's
// single-tensor implementations: per-element arithmetic in the element
// type, the scalar coefficients (bias corrections, step size) in double.
// The momentum buffer and the moments start at zero: SGD's first step then
// sets the buffer to the gradient, as PyTorch's clone does.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"

#include <cmath>

namespace metart::cpu {

template <typename T>
static void sgdOf(int64_t count, T *param, const T *grad, T *buffer,
                  const SgdOptions &o) {
  T decay = static_cast<T>(o.weightDecay),
    momentum = static_cast<T>(o.momentum);
  T rate = static_cast<T>(-o.lr);
  for (int64_t i = 0; i < count; ++i) {
    // d = grad + weight_decay * param; buf = momentum * buf + d; d = buf.
    T d = o.weightDecay != 0 ? grad[i] + decay * param[i] : grad[i];
    if (buffer) {
      buffer[i] = momentum * buffer[i] + d;
      d = buffer[i];
    }
    param[i] += rate * d;
  }
}

KernelStatus CpuBackend::sgdUpdate(metart_dtype dtype, int64_t count,
                                   void *param, const void *grad,
                                   void *momentumBuffer,
                                   const SgdOptions &options) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    sgdOf(count, static_cast<T *>(param), static_cast<const T *>(grad),
          static_cast<T *>(momentumBuffer), options);
  });
  return KernelStatus::ok();
}

/// PyTorch's lerp: `from + weight * (to - from)`, computed from the nearer
/// end.
template <typename T> static T lerp(T from, T to, T weight) {
  T difference = to - from;
  return weight < T(0.5) ? from + weight * difference
                         : to - difference * (T(1) - weight);
}

template <typename T>
static void adamOf(int64_t count, T *param, const T *grad, T *expAvg,
                   T *expAvgSq, const AdamOptions &o) {
  double step = static_cast<double>(*o.step);
  double correction1 = 1 - std::pow(o.beta1, step);
  double correction2 = 1 - std::pow(o.beta2, step);
  T shrink = static_cast<T>(1 - o.lr * o.weightDecay);
  T decay = static_cast<T>(o.weightDecay);
  T weight1 = static_cast<T>(1 - o.beta1);
  T beta2 = static_cast<T>(o.beta2), weight2 = static_cast<T>(1 - o.beta2);
  T stepSize = static_cast<T>(-(o.lr / correction1));
  T correction2Sqrt = static_cast<T>(std::sqrt(correction2));
  T eps = static_cast<T>(o.eps);
  bool decays = o.weightDecay != 0;
  for (int64_t i = 0; i < count; ++i) {
    T g = grad[i];
    if (decays && o.decoupled)
      param[i] *= shrink;
    else if (decays)
      g += decay * param[i];
    expAvg[i] = lerp(expAvg[i], g, weight1);
    expAvgSq[i] = expAvgSq[i] * beta2 + weight2 * g * g;
    T denominator = std::sqrt(expAvgSq[i]) / correction2Sqrt + eps;
    param[i] += stepSize * (expAvg[i] / denominator);
  }
}

KernelStatus CpuBackend::increment(int64_t *counter) {
  ++*counter;
  return KernelStatus::ok();
}

KernelStatus CpuBackend::adamUpdate(metart_dtype dtype, int64_t count,
                                    void *param, const void *grad, void *expAvg,
                                    void *expAvgSq,
                                    const AdamOptions &options) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    adamOf(count, static_cast<T *>(param), static_cast<const T *>(grad),
           static_cast<T *>(expAvg), static_cast<T *>(expAvgSq), options);
  });
  return KernelStatus::ok();
}

} // namespace metart::cpu
