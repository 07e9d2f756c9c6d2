//===- Convert.cu - conversions between float types on CUDA ---------------===//
//
// f32, f64, bf16 and f16 into one another, one thread per element: 16-bit
// results rounded to nearest, ties to even (f64 through f32, as on the
// CPU), NaN kept; widening is exact. Every kernel on bf16 and f16 operands
// that takes f32 copies (ops/Widen.h) goes through these.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "DeviceFloat.cuh"
#include "Launch.cuh"
#include "Status.h"

namespace metart::cuda {

namespace {

template <typename From, typename To>
__global__ void convertKernel(int64_t count, const From *x, To *y) {
  for (int64_t i = gridStart(); i < count; i += gridStride())
    y[i] = Store<To>::of(wide(x[i]));
}

} // namespace

KernelStatus CudaBackend::convert(metart_dtype from, metart_dtype to,
                                  int64_t count, const void *x, void *y) {
  if (KernelStatus status = activate(); status.failed() || count == 0)
    return status;
  cudaStream_t s = stream.get();
  return withDeviceFloat(from, [&](auto f) {
    using From = decltype(f);
    return withDeviceFloat(to, [&](auto t) {
      using To = decltype(t);
      convertKernel<<<blocksFor(count), kThreads, 0, s>>>(
          count, static_cast<const From *>(x), static_cast<To *>(y));
      return checkLaunch("convert");
    });
  });
}

} // namespace metart::cuda
