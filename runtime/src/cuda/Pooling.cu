//===- Pooling.cu - 2-D pooling on CUDA -----------------------------------===//
//
// One thread per output element for the forward kernels, one per input
// element for the derivatives, which gather the outputs whose windows hold
// the element (in row-major order, so sums come out as the CPU backend's
// scatter-adds) instead of scattering with atomics. Windows are clipped to
// the input; max pooling picks the first maximum in row-major order or the
// first NaN, average pooling divides by the full window; window sums of the
// forward average are in double. The max derivative first records each
// window's choice in the workspace.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "CudaBackend.h"
#include "DeviceMath.cuh"
#include "Launch.cuh"
#include "Status.h"

namespace metart::cuda {

namespace {
/// The input rows [rowLo, rowHi) and columns [colLo, colHi) of a window.
struct Window {
  int64_t rowLo, rowHi, colLo, colHi;
};

/// The window of output (i, j), clipped to the input.
__device__ Window windowOf(const PoolSizes &s, int64_t i, int64_t j) {
  int64_t row = i * s.strideH - s.padH, col = j * s.strideW - s.padW;
  return {max(row, int64_t(0)), min(row + s.kernelH, s.height),
          max(col, int64_t(0)), min(col + s.kernelW, s.width)};
}

/// The outputs [lo, hi] along one dimension whose windows hold input
/// element `x`.
struct Range {
  int64_t lo, hi;
};
__device__ Range outputsHolding(int64_t x, int64_t pad, int64_t kernel,
                                int64_t stride, int64_t outSize) {
  // Output i holds x when i * stride - pad <= x < i * stride - pad + kernel.
  int64_t first = x + pad - kernel + 1;
  int64_t lo = first <= 0 ? 0 : (first + stride - 1) / stride;
  int64_t hi = min((x + pad) / stride, outSize - 1);
  return {lo, hi};
}

/// The index within its input plane of the maximum of output (i, j)'s
/// window over `plane`.
template <typename T>
__device__ int64_t argmaxOf(const PoolSizes &s, const T *plane, int64_t i,
                            int64_t j) {
  Window w = windowOf(s, i, j);
  // Padding is at most half the kernel: every window holds an input.
  int64_t best = w.rowLo * s.width + w.colLo;
  T current = plane[best];
  for (int64_t r = w.rowLo; r < w.rowHi; ++r)
    for (int64_t c = w.colLo; c < w.colHi; ++c) {
      T value = plane[r * s.width + c];
      if (value > current ||
          (Math<T>::isnan(value) && !Math<T>::isnan(current))) {
        best = r * s.width + c;
        current = value;
      }
    }
  return best;
}

/// y[output] = from[argmax of the output's window over x].
template <typename T>
__global__ void maxPoolKernel(PoolSizes s, const T *x, const T *from, T *y) {
  int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  int64_t total = s.planes * outPlane;
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t plane = e / outPlane, o = e % outPlane;
    int64_t best =
        argmaxOf(s, x + plane * inPlane, o / s.outWidth, o % s.outWidth);
    y[e] = from[plane * inPlane + best];
  }
}

/// argmax[output] = the index within its plane of the window's maximum.
template <typename T>
__global__ void argmaxKernel(PoolSizes s, const T *x, int64_t *argmax) {
  int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  int64_t total = s.planes * outPlane;
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t plane = e / outPlane, o = e % outPlane;
    argmax[e] =
        argmaxOf(s, x + plane * inPlane, o / s.outWidth, o % s.outWidth);
  }
}

/// dx[element] = the sum of grad over the outputs that chose the element.
template <typename T>
__global__ void maxPoolBackwardKernel(PoolSizes s, const int64_t *argmax,
                                      const T *grad, T *dx) {
  int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  int64_t total = s.planes * inPlane;
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t plane = e / inPlane, index = e % inPlane;
    Range rows = outputsHolding(index / s.width, s.padH, s.kernelH, s.strideH,
                                s.outHeight);
    Range cols = outputsHolding(index % s.width, s.padW, s.kernelW, s.strideW,
                                s.outWidth);
    T sum = T(0);
    for (int64_t i = rows.lo; i <= rows.hi; ++i)
      for (int64_t j = cols.lo; j <= cols.hi; ++j) {
        int64_t o = plane * outPlane + i * s.outWidth + j;
        if (argmax[o] == index)
          sum += grad[o];
      }
    dx[e] = sum;
  }
}

template <typename T>
__global__ void avgPoolKernel(PoolSizes s, const T *x, T *y) {
  int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  int64_t total = s.planes * outPlane;
  double window = static_cast<double>(s.kernelH * s.kernelW);
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t plane = e / outPlane, o = e % outPlane;
    const T *p = x + plane * inPlane;
    Window w = windowOf(s, o / s.outWidth, o % s.outWidth);
    double sum = 0;
    for (int64_t r = w.rowLo; r < w.rowHi; ++r)
      for (int64_t c = w.colLo; c < w.colHi; ++c)
        sum += static_cast<double>(p[r * s.width + c]);
    y[e] = static_cast<T>(sum / window);
  }
}

/// dx[element] = the sum of grad / window over the windows holding it.
template <typename T>
__global__ void avgPoolBackwardKernel(PoolSizes s, const T *grad, T *dx) {
  int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  int64_t total = s.planes * inPlane;
  T window = static_cast<T>(s.kernelH * s.kernelW);
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t plane = e / inPlane, index = e % inPlane;
    Range rows = outputsHolding(index / s.width, s.padH, s.kernelH, s.strideH,
                                s.outHeight);
    Range cols = outputsHolding(index % s.width, s.padW, s.kernelW, s.strideW,
                                s.outWidth);
    const T *g = grad + plane * outPlane;
    T sum = T(0);
    for (int64_t i = rows.lo; i <= rows.hi; ++i)
      for (int64_t j = cols.lo; j <= cols.hi; ++j)
        sum += g[i * s.outWidth + j] / window;
    dx[e] = sum;
  }
}
} // namespace

KernelStatus CudaBackend::maxPool2d(metart_dtype dtype, const PoolSizes &sizes,
                                    const void *x, void *y) {
  return maxPool2dGather(dtype, sizes, x, x, y);
}

KernelStatus CudaBackend::maxPool2dGather(metart_dtype dtype,
                                          const PoolSizes &sizes, const void *x,
                                          const void *source, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  int64_t total = sizes.planes * sizes.outHeight * sizes.outWidth;
  if (total == 0)
    return KernelStatus::ok();
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    maxPoolKernel<<<blocksFor(total), kThreads, 0, stream.get()>>>(
        sizes, static_cast<const T *>(x), static_cast<const T *>(source),
        static_cast<T *>(y));
    return checkLaunch("max_pool2d");
  });
}

KernelStatus CudaBackend::maxPool2dBackward(metart_dtype dtype,
                                            const PoolSizes &sizes,
                                            const void *x, const void *grad,
                                            void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  int64_t inputs = sizes.planes * sizes.height * sizes.width;
  int64_t outputs = sizes.planes * sizes.outHeight * sizes.outWidth;
  if (inputs == 0)
    return KernelStatus::ok();
  if (outputs == 0)
    return checkCuda(
        cudaMemsetAsync(y, 0, inputs * dtypeSize(dtype), stream.get()),
        "cudaMemsetAsync");
  size_t bytes = static_cast<size_t>(outputs) * sizeof(int64_t);
  auto *argmax = static_cast<int64_t *>(workspace.get(bytes));
  if (!argmax)
    return workspaceExhausted(bytes);
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    argmaxKernel<<<blocksFor(outputs), kThreads, 0, stream.get()>>>(
        sizes, static_cast<const T *>(x), argmax);
    if (KernelStatus status = checkLaunch("max_pool2d argmax"); status.failed())
      return status;
    maxPoolBackwardKernel<<<blocksFor(inputs), kThreads, 0, stream.get()>>>(
        sizes, argmax, static_cast<const T *>(grad), static_cast<T *>(y));
    return checkLaunch("max_pool2d_backward");
  });
}

KernelStatus CudaBackend::avgPool2d(metart_dtype dtype, const PoolSizes &sizes,
                                    const void *x, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  int64_t total = sizes.planes * sizes.outHeight * sizes.outWidth;
  if (total == 0)
    return KernelStatus::ok();
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    avgPoolKernel<<<blocksFor(total), kThreads, 0, stream.get()>>>(
        sizes, static_cast<const T *>(x), static_cast<T *>(y));
    return checkLaunch("avg_pool2d");
  });
}

KernelStatus CudaBackend::avgPool2dBackward(metart_dtype dtype,
                                            const PoolSizes &sizes,
                                            const void *grad, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  int64_t inputs = sizes.planes * sizes.height * sizes.width;
  if (inputs == 0)
    return KernelStatus::ok();
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    avgPoolBackwardKernel<<<blocksFor(inputs), kThreads, 0, stream.get()>>>(
        sizes, static_cast<const T *>(grad), static_cast<T *>(y));
    return checkLaunch("avg_pool2d_backward");
  });
}

} // namespace metart::cuda
