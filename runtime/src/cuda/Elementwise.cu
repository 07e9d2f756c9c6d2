//===- Elementwise.cu - elementwise kernels on CUDA -----------------------===//
//
// Fill, the unary maps, scale and the four binary operations: one thread per
// element (grid-stride), the operation a functor chosen once per call, with
// the formulas of the CPU backend. The result may be exactly an operand.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "CudaBackend.h"
#include "DeviceMath.cuh"
#include "Launch.cuh"
#include "Status.h"

namespace metart::cuda {

namespace {

template <typename T> __global__ void fillKernel(int64_t count, T *y, T value) {
  for (int64_t i = gridStart(); i < count; i += gridStride())
    y[i] = value;
}

template <typename T, typename Fn>
__global__ void mapKernel(int64_t count, const T *x, T *y, Fn fn) {
  for (int64_t i = gridStart(); i < count; i += gridStride())
    y[i] = fn(x[i]);
}

template <typename T, typename Fn>
__global__ void zipKernel(int64_t count, const T *a, const T *b, T *y, Fn fn) {
  for (int64_t i = gridStart(); i < count; i += gridStride())
    y[i] = fn(a[i], b[i]);
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
  case METART_F16: // computed in f32 (ops/Widen.h)
    break;
  }
  return {METART_ERROR_INVALID_ARGUMENT, "unknown element type"};
}

template <typename T, template <typename> class Fn>
static KernelStatus map(cudaStream_t stream, int64_t count, const void *x,
                        void *y, Fn<T> fn = Fn<T>()) {
  mapKernel<<<blocksFor(count), kThreads, 0, stream>>>(
      count, static_cast<const T *>(x), static_cast<T *>(y), fn);
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
  return cpu::withFloat(dtype, [&](auto t) {
    return unaryOf<decltype(t)>(stream.get(), op, count, x, y);
  });
}

KernelStatus CudaBackend::scale(metart_dtype dtype, int64_t count,
                                const void *x, double factor, void *y) {
  if (KernelStatus status = activate(); status.failed() || count == 0)
    return status;
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    return map<T, Scaled>(stream.get(), count, x, y,
                          Scaled<T>{static_cast<T>(factor)});
  });
}

template <typename T, template <typename> class Fn>
static KernelStatus zip(cudaStream_t stream, int64_t count, const void *a,
                        const void *b, void *y) {
  zipKernel<<<blocksFor(count), kThreads, 0, stream>>>(
      count, static_cast<const T *>(a), static_cast<const T *>(b),
      static_cast<T *>(y), Fn<T>());
  return checkLaunch("binary");
}

KernelStatus CudaBackend::binary(metart_binary_op op, metart_dtype dtype,
                                 int64_t count, const void *a, const void *b,
                                 void *y) {
  if (KernelStatus status = activate(); status.failed() || count == 0)
    return status;
  return cpu::withFloat(dtype, [&](auto t) -> KernelStatus {
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
