//===- DeviceFloat.cuh - the float types of the CUDA kernels ----*- C++ -*-===//
//
// The device types of METART_F32, F64, BF16 and F16, their values widened
// for arithmetic (16-bit types to float, exactly) and rounded back to
// nearest, ties to even (a double through float, as on the CPU).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_DEVICEFLOAT_CUH
#define METART_SRC_CUDA_DEVICEFLOAT_CUH

#include "../Tensor.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace metart::cuda {

__device__ inline float wide(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float wide(__half v) { return __half2float(v); }
__device__ inline float wide(float v) { return v; }
__device__ inline double wide(double v) { return v; }

/// `Store<T>::of(v)`: `v` rounded to T.
template <typename To> struct Store;
template <> struct Store<float> {
  template <typename V> __device__ static float of(V v) {
    return static_cast<float>(v);
  }
};
template <> struct Store<double> {
  template <typename V> __device__ static double of(V v) {
    return static_cast<double>(v);
  }
};
template <> struct Store<__nv_bfloat16> {
  template <typename V> __device__ static __nv_bfloat16 of(V v) {
    return __float2bfloat16_rn(static_cast<float>(v));
  }
};
template <> struct Store<__half> {
  template <typename V> __device__ static __half of(V v) {
    return __float2half_rn(static_cast<float>(v));
  }
};

/// The type arithmetic on T runs in: double for double, float otherwise.
template <typename T> struct Accumulator { using type = float; };
template <> struct Accumulator<double> { using type = double; };

/// Calls `fn(T())` with T the device type of a float `dtype`.
template <typename Fn> KernelStatus withDeviceFloat(metart_dtype dtype, Fn fn) {
  switch (dtype) {
  case METART_F32:
    return fn(float());
  case METART_F64:
    return fn(double());
  case METART_BF16:
    return fn(__nv_bfloat16());
  case METART_F16:
    return fn(__half());
  default:
    return {METART_ERROR_INVALID_ARGUMENT,
            "expects f32, f64, bf16 or f16 operands"};
  }
}

} // namespace metart::cuda

#endif // METART_SRC_CUDA_DEVICEFLOAT_CUH
