//===- DeviceMath.cuh - math functions by element type ----------*- C++ -*-===//
//
// The kernels are templates over float and double; `Math<T>` names the CUDA
// math function of each precision (expf or exp, ...), the counterparts of
// the std:: functions that the CPU backend calls. No fast-math intrinsics.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_DEVICEMATH_CUH
#define METART_SRC_CUDA_DEVICEMATH_CUH

namespace metart::cuda {

template <typename T> struct Math;

template <> struct Math<float> {
  __device__ static float exp(float v) { return ::expf(v); }
  __device__ static float log(float v) { return ::logf(v); }
  __device__ static float sqrt(float v) { return ::sqrtf(v); }
  __device__ static float erf(float v) { return ::erff(v); }
  __device__ static float erfc(float v) { return ::erfcf(v); }
  __device__ static float tanh(float v) { return ::tanhf(v); }
  __device__ static bool isnan(float v) { return ::isnan(v); }
  /// The largest finite value (FLT_MAX).
  __device__ static constexpr double max() { return 3.4028234663852886e38; }
};

template <> struct Math<double> {
  __device__ static double exp(double v) { return ::exp(v); }
  __device__ static double log(double v) { return ::log(v); }
  __device__ static double sqrt(double v) { return ::sqrt(v); }
  __device__ static double erf(double v) { return ::erf(v); }
  __device__ static double erfc(double v) { return ::erfc(v); }
  __device__ static double tanh(double v) { return ::tanh(v); }
  __device__ static bool isnan(double v) { return ::isnan(v); }
  /// The largest finite value (DBL_MAX).
  __device__ static constexpr double max() { return 1.7976931348623157e308; }
};

} // namespace metart::cuda

#endif // METART_SRC_CUDA_DEVICEMATH_CUH
