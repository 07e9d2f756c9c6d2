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
#include "Reduce.cuh"
#include "Status.h"

#include <algorithm>
#include <cmath>

namespace metart::cuda {

namespace {
/// Whether the gate (null: none) skips the update, and its gradient scale.
__device__ bool skips(const double *gate) { return gate && gate[0] == 0; }
template <typename T> __device__ T scaleOf(const double *gate) {
  return gate ? static_cast<T>(gate[1]) : T(1);
}

/// Gradients of one guard launch: a block per tensor (at most this many
/// per launch, so that the kernel's parameters stay small).
constexpr int kGuardTensors = 96;
template <typename T> struct GuardTensors {
  const T *data[kGuardTensors];
  int64_t sizes[kGuardTensors];
};

/// Blocks per tensor of the guard's sums of squares: a block per tensor
/// would leave most of the device idle over a few large tensors.
constexpr int kGuardSlices = 32;

/// partial[t * kGuardSlices + s] = the sum of squares of slice s (of
/// kGuardSlices equal, consecutive ones) of tensor t, in double.
template <typename T>
__global__ void __launch_bounds__(256)
    sumOfSquaresKernel(GuardTensors<T> tensors, double *partial) {
  const T *x = tensors.data[blockIdx.x];
  int64_t n = tensors.sizes[blockIdx.x];
  int64_t length = (n + kGuardSlices - 1) / kGuardSlices;
  int64_t first = blockIdx.y * length, end = min(n, first + length);
  double sum = 0;
  for (int64_t i = first + threadIdx.x; i < end; i += 256) {
    double v = static_cast<double>(x[i]);
    sum += v * v;
  }
  sum = blockReduce<256>(sum, SumOp(), 0.0);
  if (threadIdx.x == 0)
    partial[blockIdx.x * kGuardSlices + blockIdx.y] = sum;
}

/// norms[t] = the sum of tensor t's slices, in order (so that every
/// replay, and every rank, computes the same bits).
template <typename T>
__global__ void sumSlicesKernel(int64_t count, const double *partial,
                                double *norms) {
  for (int64_t t = gridStart(); t < count; t += gridStride()) {
    double sum = 0;
    for (int s = 0; s < kGuardSlices; ++s)
      sum += partial[t * kGuardSlices + s];
    // Past the element type's range, as PyTorch's norm in that type:
    // infinite.
    if (sum > static_cast<double>(Math<T>::max()))
      sum = INFINITY;
    norms[t] = sum;
  }
}

/// gate = [loss and every norm finite, min(1, clip / (||g|| + 1e-6))].
template <typename L>
__global__ void gateKernel(const L *loss, const double *norms, int64_t count,
                           double clipNorm, double *gate) {
  bool finite = isfinite(static_cast<double>(*loss));
  double total = 0;
  for (int64_t i = 0; i < count; ++i) {
    finite = finite && isfinite(norms[i]);
    total += norms[i];
  }
  gate[0] = finite ? 1 : 0;
  gate[1] = clipNorm > 0 ? fmin(1.0, clipNorm / (sqrt(total) + 1e-6)) : 1.0;
}

template <typename T> struct SgdCoefficients {
  T decay, momentum, rate;
  bool decays;
};

template <typename T>
__global__ void sgdKernel(int64_t count, T *param, const T *grad, T *buffer,
                          SgdCoefficients<T> k, const double *gate) {
  if (skips(gate))
    return;
  T scale = scaleOf<T>(gate);
  for (int64_t i = gridStart(); i < count; i += gridStride()) {
    // d = grad + weight_decay * param; buf = momentum * buf + d; d = buf.
    T g = grad[i] * scale;
    T d = k.decays ? g + k.decay * param[i] : g;
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
                           AdamCoefficients<T> k, const double *gate) {
  if (skips(gate))
    return;
  T scale = scaleOf<T>(gate);
  double step = static_cast<double>(*stepCount);
  double correction1 = 1 - pow(k.beta1Double, step);
  T stepSize = static_cast<T>(-(k.lr / correction1));
  T correction2Sqrt = static_cast<T>(sqrt(1 - pow(k.beta2Double, step)));
  for (int64_t i = gridStart(); i < count; i += gridStride()) {
    T g = grad[i] * scale;
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
        static_cast<T *>(momentumBuffer), k, options.gate);
    return checkLaunch("sgd_update");
  });
}

static __global__ void incrementKernel(int64_t *counter, const double *gate) {
  if (!skips(gate))
    ++*counter;
}

KernelStatus CudaBackend::increment(int64_t *counter, const double *gate) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  incrementKernel<<<1, 1, 0, stream.get()>>>(counter, gate);
  return checkLaunch("increment");
}

KernelStatus CudaBackend::updateGuard(const GuardInputs &in, double *norms,
                                      double *gate) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  size_t partialBytes = in.count * kGuardSlices * sizeof(double);
  auto *partial = static_cast<double *>(workspace.get(partialBytes));
  if (!partial && in.count > 0)
    return workspaceExhausted(partialBytes);
  KernelStatus launched = cpu::withFloat(in.dtype, [&](auto t) {
    using T = decltype(t);
    for (int64_t first = 0; first < in.count; first += kGuardTensors) {
      int64_t n = std::min<int64_t>(kGuardTensors, in.count - first);
      GuardTensors<T> tensors{};
      for (int64_t i = 0; i < n; ++i) {
        tensors.data[i] = static_cast<const T *>(in.data[first + i]);
        tensors.sizes[i] = in.sizes[first + i];
      }
      sumOfSquaresKernel<<<dim3(static_cast<unsigned>(n), kGuardSlices), 256, 0,
                           stream.get()>>>(tensors,
                                           partial + first * kGuardSlices);
      if (KernelStatus s = checkLaunch("update_guard"); s.failed())
        return s;
    }
    if (in.count > 0)
      sumSlicesKernel<T><<<blocksFor(in.count), kThreads, 0, stream.get()>>>(
          in.count, partial, norms);
    return checkLaunch("update_guard");
  });
  if (launched.failed())
    return launched;
  return cpu::withFloat(in.lossType, [&](auto t) {
    using L = decltype(t);
    gateKernel<<<1, 1, 0, stream.get()>>>(static_cast<const L *>(in.loss),
                                          norms, in.count, in.clipNorm, gate);
    return checkLaunch("update_guard");
  });
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
        static_cast<T *>(expAvg), static_cast<T *>(expAvgSq), o.step, k,
        o.gate);
    return checkLaunch("adam_update");
  });
}

} // namespace metart::cuda
