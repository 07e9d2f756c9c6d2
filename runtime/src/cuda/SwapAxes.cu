//===- SwapAxes.cu - exchanging the two leading axes ----------------------===//

#include "Launch.cuh"
#include "Status.h"
#include "SwapAxes.h"

namespace metart::cuda {

namespace {

template <typename T>
__global__ void swapKernel(const T *in, T *out, int64_t a, int64_t b,
                           int64_t inner, bool accumulate) {
  int64_t total = a * b * inner;
  for (int64_t i = gridStart(); i < total; i += gridStride()) {
    // i indexes the output [b, a, inner]: consecutive threads write (and
    // read) consecutive elements of a row of `inner`.
    int64_t e = i % inner, rest = i / inner;
    int64_t ia = rest % a, ib = rest / a;
    T value = in[(ia * b + ib) * inner + e];
    out[i] = accumulate ? out[i] + value : value;
  }
}

} // namespace

KernelStatus swapLeadingAxes(cudaStream_t stream, metart_dtype dtype,
                             const void *in, void *out, int64_t a, int64_t b,
                             int64_t inner, bool accumulate) {
  int64_t total = a * b * inner;
  if (total == 0)
    return KernelStatus::ok();
  if (dtype == METART_F64)
    swapKernel<<<blocksFor(total), kThreads, 0, stream>>>(
        static_cast<const double *>(in), static_cast<double *>(out), a, b,
        inner, accumulate);
  else
    swapKernel<<<blocksFor(total), kThreads, 0, stream>>>(
        static_cast<const float *>(in), static_cast<float *>(out), a, b, inner,
        accumulate);
  return checkLaunch("swapping the tasks and images of a convolution");
}

} // namespace metart::cuda
