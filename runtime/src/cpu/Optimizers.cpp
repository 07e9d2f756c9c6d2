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

#include <algorithm>
#include <cmath>
#include <limits>

namespace metart::cpu {

/// The sum of the squares of `x`, in double, over four partial sums (so
/// that the loop is not one long chain of dependent additions).
template <typename T> static double sumOfSquares(const T *x, int64_t count) {
  double partial[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= count; i += 4)
    for (int k = 0; k < 4; ++k)
      partial[k] += static_cast<double>(x[i + k]) * x[i + k];
  for (; i < count; ++i)
    partial[0] += static_cast<double>(x[i]) * x[i];
  return (partial[0] + partial[1]) + (partial[2] + partial[3]);
}

/// The gate's verdict and the gradient scale (1 without a gate).
static bool skips(const double *gate) { return gate && gate[0] == 0; }
template <typename T> static T scaleOf(const double *gate) {
  return gate ? static_cast<T>(gate[1]) : T(1);
}

KernelStatus CpuBackend::updateGuard(const GuardInputs &in, double *norms,
                                     double *gate) {
  double loss = 0;
  withFloat(in.lossType,
            [&](auto t) { loss = *static_cast<const decltype(t) *>(in.loss); });
  bool finite = std::isfinite(loss);
  double total = 0;
  for (int64_t i = 0; i < in.count; ++i) {
    withFloat(in.dtype, [&](auto t) {
      using T = decltype(t);
      norms[i] = sumOfSquares(static_cast<const T *>(in.data[i]), in.sizes[i]);
      // A squared norm past the element type's range is what PyTorch's norm
      // in that type reports: infinite.
      if (norms[i] > std::numeric_limits<T>::max())
        norms[i] = std::numeric_limits<double>::infinity();
    });
    finite = finite && std::isfinite(norms[i]);
    total += norms[i];
  }
  gate[0] = finite ? 1 : 0;
  // torch.nn.utils.clip_grad_norm_: max_norm / (total_norm + 1e-6), at most 1.
  gate[1] = in.clipNorm > 0
                ? std::min(1.0, in.clipNorm / (std::sqrt(total) + 1e-6))
                : 1.0;
  return KernelStatus::ok();
}

template <typename T>
static void sgdOf(int64_t count, T *param, const T *grad, T *buffer,
                  const SgdOptions &o) {
  if (skips(o.gate))
    return;
  T decay = static_cast<T>(o.weightDecay),
    momentum = static_cast<T>(o.momentum);
  T rate = static_cast<T>(-o.lr), scale = scaleOf<T>(o.gate);
  for (int64_t i = 0; i < count; ++i) {
    // d = grad + weight_decay * param; buf = momentum * buf + d; d = buf.
    T g = grad[i] * scale;
    T d = o.weightDecay != 0 ? g + decay * param[i] : g;
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
  if (skips(o.gate))
    return;
  T scale = scaleOf<T>(o.gate);
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
    T g = grad[i] * scale;
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

KernelStatus CpuBackend::increment(int64_t *counter, const double *gate) {
  if (!skips(gate))
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
