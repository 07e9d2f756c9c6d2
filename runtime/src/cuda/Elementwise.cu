//===- Elementwise.cu - elementwise kernels on CUDA -----------------------===//
//
// Fill, the unary maps, scale and the four binary operations: one thread per
// element (grid-stride), the operation a functor chosen once per call, with
// the formulas of the CPU backend. The result may be exactly an operand.
// bf16 and f16 elements are read as they are, computed in f32 and rounded
// once, as the CPU's f32 copies give.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "CudaBackend.h"
#include "DeviceFloat.cuh"
#include "DeviceMath.cuh"
#include "Launch.cuh"
#include "Status.h"

namespace metart::cuda {

namespace {

template <typename T> __global__ void fillKernel(int64_t count, T *y, T value) {
  for (int64_t i = gridStart(); i < count; i += gridStride())
    y[i] = value;
}

/// A 16-bit fill, rounded on the device.
template <typename S>
__global__ void fillRoundedKernel(int64_t count, S *y, float value) {
  S rounded = Store<S>::of(value);
  for (int64_t i = gridStart(); i < count; i += gridStride())
    y[i] = rounded;
}

// Elements stored as S (f32, f64, bf16, f16) are computed in the functor's
// type (float for the 16-bit ones) and rounded once.
template <typename S, typename Fn>
__global__ void mapKernel(int64_t count, const S *x, S *y, Fn fn) {
  for (int64_t i = gridStart(); i < count; i += gridStride())
    y[i] = Store<S>::of(fn(wide(x[i])));
}

template <typename S, typename Fn>
__global__ void zipKernel(int64_t count, const S *a, const S *b, S *y, Fn fn) {
  for (int64_t i = gridStart(); i < count; i += gridStride())
    y[i] = Store<S>::of(fn(wide(a[i]), wide(b[i])));
}

template <typename T> struct Negate {
  __device__ T operator()(T v) const { return -v; }
};
template <typename T> struct Exp {
  __device__ T operator()(T v) const { return Math<T>::exp(v); }
};
template <typename T> struct Log {
  __device__ T operator()(T v) const { return Math<T>::log(v); }
};
template <typename T> struct Sqrt {
  __device__ T operator()(T v) const { return Math<T>::sqrt(v); }
};
template <typename T> struct Rsqrt {
  __device__ T operator()(T v) const { return T(1) / Math<T>::sqrt(v); }
};
template <typename T> struct Erf {
  __device__ T operator()(T v) const { return Math<T>::erf(v); }
};
/// Written so that NaN propagates, as in PyTorch.
template <typename T> struct Relu {
  __device__ T operator()(T v) const { return v < T(0) ? T(0) : v; }
};
template <typename T> struct Step {
  __device__ T operator()(T v) const { return v > T(0) ? T(1) : T(0); }
};
template <typename T> struct Tanh {
  __device__ T operator()(T v) const { return Math<T>::tanh(v); }
};
template <typename T> struct Sigmoid {
  __device__ T operator()(T v) const {
    return T(1) / (T(1) + Math<T>::exp(-v));
  }
};
/// x * Phi(x) with Phi(x) = erfc(-x / sqrt(2)) / 2, as on the CPU.
template <typename T> struct Gelu {
  __device__ T operator()(T v) const {
    return v * T(0.5) * Math<T>::erfc(-v * T(0.70710678118654752440));
  }
};
template <typename T> struct Scaled {
  T factor;
  __device__ T operator()(T v) const { return factor * v; }
};

template <typename T> struct Add {
  __device__ T operator()(T u, T v) const { return u + v; }
};
template <typename T> struct Subtract {
  __device__ T operator()(T u, T v) const { return u - v; }
};
template <typename T> struct Multiply {
  __device__ T operator()(T u, T v) const { return u * v; }
};
template <typename T> struct Divide {
  __device__ T operator()(T u, T v) const { return u / v; }
};

} // namespace

template <typename T>
static KernelStatus fillOf(cudaStream_t stream, int64_t count, void *y,
                           T value) {
  fillKernel<<<blocksFor(count), kThreads, 0, stream>>>(
      count, static_cast<T *>(y), value);
  return checkLaunch("fill");
}

KernelStatus CudaBackend::fill(metart_dtype dtype, int64_t count, void *y,
                               double value) {
  if (KernelStatus status = activate(); status.failed() || count == 0)
    return status;
  cudaStream_t s = stream.get();
  switch (dtype) {
  case METART_F32:
    return fillOf(s, count, y, static_cast<float>(value));
  case METART_F64:
    return fillOf(s, count, y, value);
  case METART_I32:
    return fillOf(s, count, y, static_cast<int32_t>(value));
  case METART_I64:
    return fillOf(s, count, y, static_cast<int64_t>(value));
  case METART_BF16:
    fillRoundedKernel<<<blocksFor(count), kThreads, 0, s>>>(
        count, static_cast<__nv_bfloat16 *>(y), static_cast<float>(value));
    return checkLaunch("fill");
  case METART_F16:
    fillRoundedKernel<<<blocksFor(count), kThreads, 0, s>>>(
        count, static_cast<__half *>(y), static_cast<float>(value));
    return checkLaunch("fill");
  }
  return {METART_ERROR_INVALID_ARGUMENT, "unknown element type"};
}

/// The type elements stored as S are computed in.
template <typename S> using Compute = typename Accumulator<S>::type;

template <typename S, template <typename> class Fn>
static KernelStatus map(cudaStream_t stream, int64_t count, const void *x,
                        void *y, Fn<Compute<S>> fn = Fn<Compute<S>>()) {
  mapKernel<<<blocksFor(count), kThreads, 0, stream>>>(
      count, static_cast<const S *>(x), static_cast<S *>(y), fn);
  return checkLaunch("elementwise");
}

template <typename T>
static KernelStatus unaryOf(cudaStream_t s, metart_unary_op op, int64_t count,
                            const void *x, void *y) {
  switch (op) {
  case METART_NEG:
    return map<T, Negate>(s, count, x, y);
  case METART_EXP:
    return map<T, Exp>(s, count, x, y);
  case METART_LOG:
    return map<T, Log>(s, count, x, y);
  case METART_SQRT:
    return map<T, Sqrt>(s, count, x, y);
  case METART_RSQRT:
    return map<T, Rsqrt>(s, count, x, y);
  case METART_ERF:
    return map<T, Erf>(s, count, x, y);
  case METART_RELU:
    return map<T, Relu>(s, count, x, y);
  case METART_STEP:
    return map<T, Step>(s, count, x, y);
  case METART_TANH:
    return map<T, Tanh>(s, count, x, y);
  case METART_SIGMOID:
    return map<T, Sigmoid>(s, count, x, y);
  case METART_GELU:
    return map<T, Gelu>(s, count, x, y);
  }
  return {METART_ERROR_INVALID_ARGUMENT, "unknown unary op"};
}

KernelStatus CudaBackend::unary(metart_unary_op op, metart_dtype dtype,
                                int64_t count, const void *x, void *y) {
  if (KernelStatus status = activate(); status.failed() || count == 0)
    return status;
  return withDeviceFloat(dtype, [&](auto t) {
    return unaryOf<decltype(t)>(stream.get(), op, count, x, y);
  });
}

KernelStatus CudaBackend::scale(metart_dtype dtype, int64_t count,
                                const void *x, double factor, void *y) {
  if (KernelStatus status = activate(); status.failed() || count == 0)
    return status;
  return withDeviceFloat(dtype, [&](auto t) {
    using S = decltype(t);
    return map<S, Scaled>(stream.get(), count, x, y,
                          Scaled<Compute<S>>{static_cast<Compute<S>>(factor)});
  });
}

template <typename S, template <typename> class Fn>
static KernelStatus zip(cudaStream_t stream, int64_t count, const void *a,
                        const void *b, void *y) {
  zipKernel<<<blocksFor(count), kThreads, 0, stream>>>(
      count, static_cast<const S *>(a), static_cast<const S *>(b),
      static_cast<S *>(y), Fn<Compute<S>>());
  return checkLaunch("binary");
}

KernelStatus CudaBackend::binary(metart_binary_op op, metart_dtype dtype,
                                 int64_t count, const void *a, const void *b,
                                 void *y) {
  if (KernelStatus status = activate(); status.failed() || count == 0)
    return status;
  return withDeviceFloat(dtype, [&](auto t) -> KernelStatus {
    using T = decltype(t);
    cudaStream_t s = stream.get();
    switch (op) {
    case METART_ADD:
      return zip<T, Add>(s, count, a, b, y);
    case METART_SUB:
      return zip<T, Subtract>(s, count, a, b, y);
    case METART_MUL:
      return zip<T, Multiply>(s, count, a, b, y);
    case METART_DIV:
      return zip<T, Divide>(s, count, a, b, y);
    }
    return {METART_ERROR_INVALID_ARGUMENT, "unknown binary op"};
  });
}

} // namespace metart::cuda
