//===- Optimizers.cu - outer optimizer updates on CUDA --------------------===//
//
// torch.optim.SGD and Adam / AdamW, in place, a thread per element with
// the CPU backend's order of operations: per-element arithmetic in the
// element type, scalar coefficients computed in double (Adam's bias
// corrections on the device, from the step count in device memory).
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "CudaBackend.h"
#include "DeviceMath.cuh"
#include "Launch.cuh"
#include "Status.h"

#include <cmath>

namespace metart::cuda {

namespace {
template <typename T> struct SgdCoefficients {
  T decay, momentum, rate;
  bool decays;
};

template <typename T>
__global__ void sgdKernel(int64_t count, T *param, const T *grad, T *buffer,
                          SgdCoefficients<T> k) {
  for (int64_t i = gridStart(); i < count; i += gridStride()) {
    // d = grad + weight_decay * param; buf = momentum * buf + d; d = buf.
    T d = k.decays ? grad[i] + k.decay * param[i] : grad[i];
    if (buffer) {
      buffer[i] = k.momentum * buffer[i] + d;
      d = buffer[i];
    }
    param[i] += k.rate * d;
  }
}

/// The coefficients of Adam that do not depend on the step number; those
/// that do are computed on the device from the step count (in double, as
/// the CPU backend computes them).
template <typename T> struct AdamCoefficients {
  T shrink, decay, weight1, beta2, weight2, eps;
  double lr, beta1Double, beta2Double;
  bool decays, decoupled;
};

/// PyTorch's lerp: `from + weight * (to - from)`, from the nearer end.
template <typename T> __device__ T lerp(T from, T to, T weight) {
  T difference = to - from;
  return weight < T(0.5) ? from + weight * difference
                         : to - difference * (T(1) - weight);
}

template <typename T>
__global__ void adamKernel(int64_t count, T *param, const T *grad, T *expAvg,
                           T *expAvgSq, const int64_t *stepCount,
                           AdamCoefficients<T> k) {
  double step = static_cast<double>(*stepCount);
  double correction1 = 1 - pow(k.beta1Double, step);
  T stepSize = static_cast<T>(-(k.lr / correction1));
  T correction2Sqrt = static_cast<T>(sqrt(1 - pow(k.beta2Double, step)));
  for (int64_t i = gridStart(); i < count; i += gridStride()) {
    T g = grad[i];
    if (k.decays && k.decoupled)
      param[i] *= k.shrink;
    else if (k.decays)
      g += k.decay * param[i];
    expAvg[i] = lerp(expAvg[i], g, k.weight1);
    expAvgSq[i] = expAvgSq[i] * k.beta2 + k.weight2 * g * g;
    T denominator = Math<T>::sqrt(expAvgSq[i]) / correction2Sqrt + k.eps;
    param[i] += stepSize * (expAvg[i] / denominator);
  }
}
} // namespace

KernelStatus CudaBackend::sgdUpdate(metart_dtype dtype, int64_t count,
                                    void *param, const void *grad,
                                    void *momentumBuffer,
                                    const SgdOptions &options) {
  if (KernelStatus status = activate(); status.failed() || count == 0)
    return status;
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    SgdCoefficients<T> k{static_cast<T>(options.weightDecay),
                         static_cast<T>(options.momentum),
                         static_cast<T>(-options.lr), options.weightDecay != 0};
    sgdKernel<<<blocksFor(count), kThreads, 0, stream.get()>>>(
        count, static_cast<T *>(param), static_cast<const T *>(grad),
        static_cast<T *>(momentumBuffer), k);
    return checkLaunch("sgd_update");
  });
}

static __global__ void incrementKernel(int64_t *counter) { ++*counter; }

KernelStatus CudaBackend::increment(int64_t *counter) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  incrementKernel<<<1, 1, 0, stream.get()>>>(counter);
  return checkLaunch("increment");
}

KernelStatus CudaBackend::adamUpdate(metart_dtype dtype, int64_t count,
                                     void *param, const void *grad,
                                     void *expAvg, void *expAvgSq,
                                     const AdamOptions &o) {
  if (KernelStatus status = activate(); status.failed() || count == 0)
    return status;
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    AdamCoefficients<T> k{static_cast<T>(1 - o.lr * o.weightDecay),
                          static_cast<T>(o.weightDecay),
                          static_cast<T>(1 - o.beta1),
                          static_cast<T>(o.beta2),
                          static_cast<T>(1 - o.beta2),
                          static_cast<T>(o.eps),
                          o.lr,
                          o.beta1,
                          o.beta2,
                          o.weightDecay != 0,
                          o.decoupled};
    adamKernel<<<blocksFor(count), kThreads, 0, stream.get()>>>(
        count, static_cast<T *>(param), static_cast<const T *>(grad),
        static_cast<T *>(expAvg), static_cast<T *>(expAvgSq), o.step, k);
    return checkLaunch("adam_update");
  });
}

} // namespace metart::cuda
