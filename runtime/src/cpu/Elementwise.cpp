//===- Elementwise.cpp - elementwise kernels on the CPU -------------------===//
//
// Fill, the unary maps, scale and the four binary operations. The operation
// is chosen once per call; each loop applies one inlined lambda to
// contiguous elements, so that the simple ones vectorise, and large loops
// are split over the backend's threads. The result may be exactly an
// operand.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"
#include "Parallel.h"

#include <algorithm>
#include <cmath>

namespace metart::cpu {

/// y[i] = fn(x[i]) for `count` elements.
template <typename T, typename Fn>
static void map(int64_t count, const T *x, T *y, Fn fn) {
  parallelFor(count, kElementGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = fn(x[i]);
  });
}

/// y[i] = fn(a[i], b[i]) for `count` elements.
template <typename T, typename Fn>
static void zip(int64_t count, const T *a, const T *b, T *y, Fn fn) {
  parallelFor(count, kElementGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = fn(a[i], b[i]);
  });
}

template <typename T> static void fillAll(int64_t count, T *y, T value) {
  parallelFor(count, kElementGrain, [&](int64_t begin, int64_t end) {
    std::fill(y + begin, y + end, value);
  });
}

KernelStatus CpuBackend::fill(metart_dtype dtype, int64_t count, void *y,
                              double value) {
  switch (dtype) {
  case METART_F32:
    fillAll(count, static_cast<float *>(y), static_cast<float>(value));
    break;
  case METART_F64:
    fillAll(count, static_cast<double *>(y), value);
    break;
  case METART_I32:
    fillAll(count, static_cast<int32_t *>(y), static_cast<int32_t>(value));
    break;
  case METART_I64:
    fillAll(count, static_cast<int64_t *>(y), static_cast<int64_t>(value));
    break;
  case METART_BF16:
  case METART_F16: // computed in f32 (ops/Widen.h)
    return {METART_ERROR_INVALID_ARGUMENT, "fill of a 16-bit float"};
  }
  return KernelStatus::ok();
}

template <typename T>
static void unaryOf(metart_unary_op op, int64_t count, const T *x, T *y) {
  switch (op) {
  case METART_NEG:
    return map(count, x, y, [](T v) { return -v; });
  case METART_EXP:
    return map(count, x, y, [](T v) { return std::exp(v); });
  case METART_LOG:
    return map(count, x, y, [](T v) { return std::log(v); });
  case METART_SQRT:
    return map(count, x, y, [](T v) { return std::sqrt(v); });
  case METART_RSQRT:
    return map(count, x, y, [](T v) { return T(1) / std::sqrt(v); });
  case METART_ERF:
    return map(count, x, y, [](T v) { return std::erf(v); });
  case METART_RELU:
    // Written so that NaN propagates, as in PyTorch.
    return map(count, x, y, [](T v) { return v < T(0) ? T(0) : v; });
  case METART_STEP:
    return map(count, x, y, [](T v) { return v > T(0) ? T(1) : T(0); });
  case METART_TANH:
    return map(count, x, y, [](T v) { return std::tanh(v); });
  case METART_SIGMOID:
    return map(count, x, y, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
  case METART_GELU:
    // x * Phi(x) with Phi(x) = erfc(-x / sqrt(2)) / 2, which unlike
    // (1 + erf(x / sqrt(2))) / 2 keeps its precision for negative x.
    return map(count, x, y, [](T v) {
      return v * T(0.5) * std::erfc(-v * T(0.70710678118654752440));
    });
  }
}

KernelStatus CpuBackend::unary(metart_unary_op op, metart_dtype dtype,
                               int64_t count, const void *x, void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    unaryOf(op, count, static_cast<const T *>(x), static_cast<T *>(y));
  });
  return KernelStatus::ok();
}

KernelStatus CpuBackend::scale(metart_dtype dtype, int64_t count, const void *x,
                               double factor, void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    T f = static_cast<T>(factor);
    map(count, static_cast<const T *>(x), static_cast<T *>(y),
        [f](T v) { return f * v; });
  });
  return KernelStatus::ok();
}

template <typename T>
static void binaryOf(metart_binary_op op, int64_t count, const T *a, const T *b,
                     T *y) {
  switch (op) {
  case METART_ADD:
    return zip(count, a, b, y, [](T u, T v) { return u + v; });
  case METART_SUB:
    return zip(count, a, b, y, [](T u, T v) { return u - v; });
  case METART_MUL:
    return zip(count, a, b, y, [](T u, T v) { return u * v; });
  case METART_DIV:
    return zip(count, a, b, y, [](T u, T v) { return u / v; });
  }
}

KernelStatus CpuBackend::binary(metart_binary_op op, metart_dtype dtype,
                                int64_t count, const void *a, const void *b,
                                void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    binaryOf(op, count, static_cast<const T *>(a), static_cast<const T *>(b),
             static_cast<T *>(y));
  });
  return KernelStatus::ok();
}

} // namespace metart::cpu
