//===- Convolution.cu - 2-D convolution on CUDA ---------------------------===//
//
// im2col + strided-batched GEMM, in chunks of images whose columns fit a
// bounded workspace. A chunk is either images of one weight slice (the
// weight repeated with batch stride 0) or, when every image has its own
// slice, consecutive images with their slices. The forward product is
// w_s [O, taps] x columns_n [taps, H' W']; the input derivative is
// w_s^T grad_n followed by col2im, which gathers for each input element the
// columns that read it (no atomics, in the CPU backend's order); the weight
// derivative of a slice is one product over all its images, the output
// gradient and the columns laid out with the images side by side. A 1x1
// convolution with stride 1 and no padding uses the images themselves as
// columns. cuDNN computes the shapes where it measures faster (Cudnn.h,
// ConvolutionChoice.h).
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "ConvolutionChoice.h"
#include "CudaBackend.h"
#include "Gemm.h"
#include "Launch.cuh"
#include "Status.h"

#include <algorithm>
#include <climits>

namespace metart::cuda {

/// The workspace a chunk of images may use (at least one image's worth).
static constexpr size_t kChunkBytes = size_t(256) << 20;

namespace {
/// One image's convolution in GEMM terms.
struct Plan {
  /// Rows of the columns matrix (C * kh * kw) and its columns (H' * W').
  int64_t taps, positions;
  /// Whether the image is its own columns matrix (1x1, stride 1, no pad).
  bool direct;
  /// Elements of an input image, of an output image, of a weight slice.
  int64_t imageSize, outputSize, sliceSize;
};

/// `count` consecutive images from `first` that one batched product
/// handles: the weight slice of the first is at `weightOffset` and those
/// of the next ones `weightStride` further each (0: one shared slice).
struct Run {
  int64_t first, count, weightOffset, weightStride;
};

/// Where im2col puts element (image n, tap t, position p) of a chunk:
/// `n * imageStride + t * tapStride + p`.
struct ColumnLayout {
  int64_t imageStride, tapStride;
};

/// Writes the columns of `count` images from `x` (C, H, W each).
template <typename T>
__global__ void im2colKernel(ConvSizes s, int64_t count, const T *x,
                             ColumnLayout layout, T *columns) {
  int64_t positions = s.outHeight * s.outWidth;
  int64_t taps = s.channels * s.kernelH * s.kernelW;
  int64_t total = count * taps * positions;
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t p = e % positions, t = (e / positions) % taps;
    int64_t n = e / (positions * taps);
    int64_t v = t % s.kernelW, u = (t / s.kernelW) % s.kernelH;
    int64_t c = t / (s.kernelW * s.kernelH);
    int64_t row = (p / s.outWidth) * s.strideH - s.padH + u;
    int64_t col = (p % s.outWidth) * s.strideW - s.padW + v;
    T value = T(0);
    if (row >= 0 && row < s.height && col >= 0 && col < s.width)
      value = x[((n * s.channels + c) * s.height + row) * s.width + col];
    columns[n * layout.imageStride + t * layout.tapStride + p] = value;
  }
}

/// Sums into each element of `count` images (C, H, W) the columns (in the
/// forward layout) that read it, kernel offsets in row-major order.
template <typename T>
__global__ void col2imKernel(ConvSizes s, int64_t count, const T *columns,
                             T *y) {
  int64_t positions = s.outHeight * s.outWidth;
  int64_t taps = s.channels * s.kernelH * s.kernelW;
  int64_t total = count * s.channels * s.height * s.width;
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t w = e % s.width, h = (e / s.width) % s.height;
    int64_t c = (e / (s.width * s.height)) % s.channels;
    int64_t n = e / (s.width * s.height * s.channels);
    const T *image = columns + n * taps * positions;
    T sum = T(0);
    for (int64_t u = 0; u < s.kernelH; ++u) {
      int64_t hi = h + s.padH - u;
      if (hi < 0 || hi % s.strideH != 0 || hi / s.strideH >= s.outHeight)
        continue;
      for (int64_t v = 0; v < s.kernelW; ++v) {
        int64_t wj = w + s.padW - v;
        if (wj < 0 || wj % s.strideW != 0 || wj / s.strideW >= s.outWidth)
          continue;
        int64_t tap = (c * s.kernelH + u) * s.kernelW + v;
        sum += image[tap * positions + (hi / s.strideH) * s.outWidth +
                     wj / s.strideW];
      }
    }
    y[e] = sum;
  }
}

/// y[n, o, p] = bias[slice(n), o] for every output element.
template <typename T>
__global__ void convBiasKernel(ConvSizes s, const T *bias, T *y) {
  int64_t positions = s.outHeight * s.outWidth;
  int64_t total = s.images * s.outChannels * positions;
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t o = (e / positions) % s.outChannels;
    int64_t n = e / (positions * s.outChannels);
    y[e] = bias[(n / s.imagesPerSlice) * s.outChannels + o];
  }
}

/// Lays out the output gradient of `count` images, [count, O, P], as
/// [O, count * P].
template <typename T>
__global__ void gradRowsKernel(int64_t count, int64_t outChannels,
                               int64_t positions, const T *grad, T *rows) {
  int64_t total = count * outChannels * positions;
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t p = e % positions, o = (e / positions) % outChannels;
    int64_t n = e / (positions * outChannels);
    rows[o * count * positions + n * positions + p] = grad[e];
  }
}
} // namespace

static Plan planOf(const ConvSizes &s) {
  Plan p;
  p.taps = s.channels * s.kernelH * s.kernelW;
  p.positions = s.outHeight * s.outWidth;
  p.direct = s.kernelH == 1 && s.kernelW == 1 && s.strideH == 1 &&
             s.strideW == 1 && s.padH == 0 && s.padW == 0;
  p.imageSize = s.channels * s.height * s.width;
  p.outputSize = s.outChannels * p.positions;
  p.sliceSize = s.outChannels * p.taps;
  return p;
}

/// Checks the sizes against cuBLAS's `int`.
static KernelStatus checkSizes(const ConvSizes &s, const Plan &p) {
  if (s.outChannels <= INT_MAX && p.taps <= INT_MAX && p.positions <= INT_MAX)
    return KernelStatus::ok();
  return {METART_ERROR_UNSUPPORTED,
          "a convolution with " + std::to_string(p.taps) + " taps and " +
              std::to_string(p.positions) +
              " output positions exceeds cuBLAS's 32-bit sizes"};
}

/// The images per chunk (of `images`) when each takes `bytesPerImage` of
/// workspace: at least one, all of them when they take none.
static int64_t chunkImages(int64_t images, int64_t bytesPerImage) {
  if (bytesPerImage == 0)
    return std::max<int64_t>(images, 1);
  return std::clamp<int64_t>(static_cast<int64_t>(kChunkBytes) / bytesPerImage,
                             1, std::max<int64_t>(images, 1));
}

/// Calls `fn(run)` for runs of at most `perChunk` images covering all of
/// them, each a valid batch of one product (see Run).
template <typename Fn>
static KernelStatus forEachRun(const ConvSizes &s, const Plan &p,
                               int64_t perChunk, Fn fn) {
  if (s.imagesPerSlice == 1) {
    for (int64_t first = 0; first < s.images; first += perChunk) {
      Run run{first, std::min(perChunk, s.images - first), first * p.sliceSize,
              p.sliceSize};
      if (KernelStatus status = fn(run); status.failed())
        return status;
    }
    return KernelStatus::ok();
  }
  for (int64_t slice = 0; slice < s.slices; ++slice)
    for (int64_t i = 0; i < s.imagesPerSlice; i += perChunk) {
      Run run{slice * s.imagesPerSlice + i,
              std::min(perChunk, s.imagesPerSlice - i), slice * p.sliceSize, 0};
      if (KernelStatus status = fn(run); status.failed())
        return status;
    }
  return KernelStatus::ok();
}

/// Workspace for `perChunk` images of `bytesPerImage` each, or null when
/// none is needed.
static KernelStatus reserve(DeviceWorkspace &workspace, const ConvSizes &s,
                            int64_t perChunk, int64_t bytesPerImage,
                            void *&data) {
  data = nullptr;
  if (bytesPerImage == 0 || s.images == 0)
    return KernelStatus::ok();
  size_t bytes =
      static_cast<size_t>(perChunk) * static_cast<size_t>(bytesPerImage);
  data = workspace.get(bytes);
  return data ? KernelStatus::ok() : workspaceExhausted(bytes);
}

template <typename T>
static KernelStatus conv2dOf(cublasHandle_t blas, cudaStream_t stream,
                             DeviceWorkspace &workspace, const ConvSizes &s,
                             const T *x, const T *weight, const T *bias, T *y) {
  Plan p = planOf(s);
  if (KernelStatus status = checkSizes(s, p); status.failed())
    return status;
  if (s.images == 0 || p.outputSize == 0)
    return KernelStatus::ok();
  if (bias) {
    convBiasKernel<<<blocksFor(s.images * p.outputSize), kThreads, 0, stream>>>(
        s, bias, y);
    if (KernelStatus status = checkLaunch("conv2d bias"); status.failed())
      return status;
  }
  int64_t columnBytes = p.direct ? 0 : p.taps * p.positions * sizeof(T);
  int64_t perChunk = chunkImages(s.images, columnBytes);
  void *columns;
  if (KernelStatus status =
          reserve(workspace, s, perChunk, columnBytes, columns);
      status.failed())
    return status;
  metart_dtype dtype = sizeof(T) == 4 ? METART_F32 : METART_F64;
  return forEachRun(s, p, perChunk, [&](const Run &run) {
    const T *matrix = x + run.first * p.imageSize;
    if (!p.direct) {
      im2colKernel<<<blocksFor(run.count * p.taps * p.positions), kThreads, 0,
                     stream>>>(s, run.count, matrix,
                               ColumnLayout{p.taps * p.positions, p.positions},
                               static_cast<T *>(columns));
      if (KernelStatus status = checkLaunch("im2col"); status.failed())
        return status;
      matrix = static_cast<const T *>(columns);
    }
    // y_n = w_s columns_n (+ y_n); in the direct case columns_n = x_n.
    return gemm(
        blas, stream, dtype, run.count, s.outChannels, p.positions, p.taps,
        {weight + run.weightOffset, p.taps, false, run.weightStride},
        {matrix, p.positions, false, p.taps * p.positions}, bias ? 1.0 : 0.0,
        {y + run.first * p.outputSize, p.positions, p.outputSize});
  });
}

KernelStatus CudaBackend::conv2d(metart_dtype dtype, const ConvSizes &sizes,
                                 const void *x, const void *weight,
                                 const void *bias, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  auto im2col = [&] {
    return cpu::withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      return conv2dOf(blas, stream.get(), workspace, sizes,
                      static_cast<const T *>(x), static_cast<const T *>(weight),
                      static_cast<const T *>(bias), static_cast<T *>(y));
    });
  };
  auto library = [&] {
    return cpu::withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      if (bias) {
        convBiasKernel<<<blocksFor(sizes.images * sizes.outChannels *
                                   sizes.outHeight * sizes.outWidth),
                         kThreads, 0, stream.get()>>>(
            sizes, static_cast<const T *>(bias), static_cast<T *>(y));
        if (KernelStatus status = checkLaunch("conv2d bias"); status.failed())
          return status;
      }
      return cudnn.forward(stream.get(), workspace, dtype, sizes, x, weight, y,
                           bias != nullptr);
    });
  };
  return chooseConvolution(0, dtype, sizes, stream.get(), capturing(), cudnn,
                           convolutionChoices, im2col, library);
}

template <typename T>
static KernelStatus backwardInputOf(cublasHandle_t blas, cudaStream_t stream,
                                    DeviceWorkspace &workspace,
                                    const ConvSizes &s, const T *grad,
                                    const T *weight, T *y) {
  Plan p = planOf(s);
  if (KernelStatus status = checkSizes(s, p); status.failed())
    return status;
  if (s.images == 0 || p.imageSize == 0)
    return KernelStatus::ok();
  int64_t columnBytes = p.direct ? 0 : p.taps * p.positions * sizeof(T);
  int64_t perChunk = chunkImages(s.images, columnBytes);
  void *columns;
  if (KernelStatus status =
          reserve(workspace, s, perChunk, columnBytes, columns);
      status.failed())
    return status;
  metart_dtype dtype = sizeof(T) == 4 ? METART_F32 : METART_F64;
  return forEachRun(s, p, perChunk, [&](const Run &run) {
    // columns_n = w_s^T grad_n: w_s is stored [O, taps], read transposed;
    // in the direct case the columns are the input derivative itself.
    T *target =
        p.direct ? y + run.first * p.imageSize : static_cast<T *>(columns);
    KernelStatus status = gemm(
        blas, stream, dtype, run.count, p.taps, p.positions, s.outChannels,
        {weight + run.weightOffset, p.taps, true, run.weightStride},
        {grad + run.first * p.outputSize, p.positions, false, p.outputSize},
        0.0, {target, p.positions, p.taps * p.positions});
    if (status.failed() || p.direct)
      return status;
    col2imKernel<<<blocksFor(run.count * p.imageSize), kThreads, 0, stream>>>(
        s, run.count, static_cast<const T *>(columns),
        y + run.first * p.imageSize);
    return checkLaunch("col2im");
  });
}

KernelStatus CudaBackend::conv2dBackwardInput(metart_dtype dtype,
                                              const ConvSizes &sizes,
                                              const void *grad,
                                              const void *weight, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  auto im2col = [&] {
    return cpu::withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      return backwardInputOf(
          blas, stream.get(), workspace, sizes, static_cast<const T *>(grad),
          static_cast<const T *>(weight), static_cast<T *>(y));
    });
  };
  auto library = [&] {
    return cudnn.backwardInput(stream.get(), workspace, dtype, sizes, grad,
                               weight, y);
  };
  return chooseConvolution(1, dtype, sizes, stream.get(), capturing(), cudnn,
                           convolutionChoices, im2col, library);
}

template <typename T>
static KernelStatus backwardWeightOf(cublasHandle_t blas, cudaStream_t stream,
                                     DeviceWorkspace &workspace,
                                     const ConvSizes &s, const T *x,
                                     const T *grad, T *y) {
  Plan p = planOf(s);
  if (KernelStatus status = checkSizes(s, p); status.failed())
    return status;
  if (s.slices == 0 || p.sliceSize == 0)
    return KernelStatus::ok();
  // Slices without images (an empty batch) get a zero gradient.
  if (KernelStatus status = checkCuda(
          cudaMemsetAsync(y, 0, s.slices * p.sliceSize * sizeof(T), stream),
          "cudaMemsetAsync");
      status.failed() || s.images == 0)
    return status;
  metart_dtype dtype = sizeof(T) == 4 ? METART_F32 : METART_F64;
  int64_t columnBytes = p.taps * p.positions * sizeof(T);
  if (s.imagesPerSlice == 1) {
    // One image per slice: w_n = grad_n columns_n^T, a batch of products.
    int64_t perChunk = chunkImages(s.images, p.direct ? 0 : columnBytes);
    void *columns;
    if (KernelStatus status = reserve(workspace, s, perChunk,
                                      p.direct ? 0 : columnBytes, columns);
        status.failed())
      return status;
    return forEachRun(s, p, perChunk, [&](const Run &run) {
      const T *matrix = x + run.first * p.imageSize;
      if (!p.direct) {
        im2colKernel<<<blocksFor(run.count * p.taps * p.positions), kThreads, 0,
                       stream>>>(
            s, run.count, matrix,
            ColumnLayout{p.taps * p.positions, p.positions},
            static_cast<T *>(columns));
        if (KernelStatus status = checkLaunch("im2col"); status.failed())
          return status;
        matrix = static_cast<const T *>(columns);
      }
      return gemm(
          blas, stream, dtype, run.count, s.outChannels, p.taps, p.positions,
          {grad + run.first * p.outputSize, p.positions, false, p.outputSize},
          {matrix, p.positions, true, p.taps * p.positions}, 0.0,
          {y + run.weightOffset, p.taps, run.weightStride});
    });
  }
  // Several images per slice: for a chunk of them, the columns as
  // [taps, count * P] and the gradient as [O, count * P], and one product
  // w_s += grad columns^T.
  int64_t gradBytes = s.outChannels * p.positions * sizeof(T);
  int64_t perChunk = chunkImages(s.images, columnBytes + gradBytes);
  void *space;
  if (KernelStatus status =
          reserve(workspace, s, perChunk, columnBytes + gradBytes, space);
      status.failed())
    return status;
  return forEachRun(s, p, perChunk, [&](const Run &run) {
    int64_t width = run.count * p.positions;
    T *columns = static_cast<T *>(space);
    T *rows = columns + p.taps * width;
    im2colKernel<<<blocksFor(run.count * p.taps * p.positions), kThreads, 0,
                   stream>>>(s, run.count, x + run.first * p.imageSize,
                             ColumnLayout{p.positions, width}, columns);
    if (KernelStatus status = checkLaunch("im2col"); status.failed())
      return status;
    gradRowsKernel<<<blocksFor(run.count * p.outputSize), kThreads, 0,
                     stream>>>(run.count, s.outChannels, p.positions,
                               grad + run.first * p.outputSize, rows);
    if (KernelStatus status = checkLaunch("conv2d gradient layout");
        status.failed())
      return status;
    return gemm(blas, stream, dtype, 1, s.outChannels, p.taps, width,
                {rows, width, false, 0}, {columns, width, true, 0}, 1.0,
                {y + run.weightOffset, p.taps, 0});
  });
}

KernelStatus CudaBackend::conv2dBackwardWeight(metart_dtype dtype,
                                               const ConvSizes &sizes,
                                               const void *x, const void *grad,
                                               void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  auto im2col = [&] {
    return cpu::withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      return backwardWeightOf(
          blas, stream.get(), workspace, sizes, static_cast<const T *>(x),
          static_cast<const T *>(grad), static_cast<T *>(y));
    });
  };
  auto library = [&] {
    return cudnn.backwardWeight(stream.get(), workspace, dtype, sizes, x, grad,
                                y);
  };
  return chooseConvolution(2, dtype, sizes, stream.get(), capturing(), cudnn,
                           convolutionChoices, im2col, library);
}

} // namespace metart::cuda
