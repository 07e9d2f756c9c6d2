//===- Normalization.cu - normalisations on CUDA --------------------------===//
//
// Batch and layer normalisation with one block per statistic (or row): the
// block sums the elements for the mean, then the squared deviations around
// it (two passes, in double), then writes the normalised elements. Blocks
// are one warp for short statistics. The (log-)softmax works on rows of the
// axis: one block per row when the axis is innermost, otherwise one thread
// per (outer, inner) column that walks the axis, as the CPU backend does.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "../cpu/Strided.h"
#include "CudaBackend.h"
#include "DeviceMath.cuh"
#include "Reduce.cuh"
#include "Status.h"
#include "StridedIndex.cuh"

#include <cmath>

namespace metart::cuda {

namespace {
/// One block per statistic: `kept` walks the statistics (operand 1 is
/// their index), `reduced` the `count` elements of one.
template <int Threads, typename T>
__global__ void __launch_bounds__(Threads)
    batchNormKernel(StridedSpace<3> kept, StridedSpace<3> reduced,
                    int64_t statistics, int64_t count, double epsilon,
                    const T *x, const T *weight, const T *bias, T *y) {
  for (int64_t st = blockIdx.x; st < statistics; st += gridDim.x) {
    int64_t base[3] = {0, 0, 0};
    addOffsets(kept, st, base);
    double sum = 0;
    for (int64_t r = threadIdx.x; r < count; r += Threads) {
      int64_t offset[3] = {base[0], 0, 0};
      addOffsets(reduced, r, offset);
      sum += static_cast<double>(x[offset[0]]);
    }
    double mean =
        blockReduce<Threads>(sum, SumOp(), 0.0) / static_cast<double>(count);
    double squares = 0;
    for (int64_t r = threadIdx.x; r < count; r += Threads) {
      int64_t offset[3] = {base[0], 0, 0};
      addOffsets(reduced, r, offset);
      double centered = static_cast<double>(x[offset[0]]) - mean;
      squares += centered * centered;
    }
    double deviation = sqrt(blockReduce<Threads>(squares, SumOp(), 0.0) /
                                static_cast<double>(count) +
                            epsilon);
    for (int64_t r = threadIdx.x; r < count; r += Threads) {
      int64_t offset[3] = {base[0], 0, base[2]};
      addOffsets(reduced, r, offset);
      double normalized =
          (static_cast<double>(x[offset[0]]) - mean) / deviation;
      y[offset[0]] =
          static_cast<T>(static_cast<double>(weight[offset[2]]) * normalized +
                         static_cast<double>(bias[offset[2]]));
    }
  }
}

/// One block per row of `width`; rows of a slice share weight and bias.
template <int Threads, typename T>
__global__ void __launch_bounds__(Threads)
    layerNormKernel(LayerNormSizes s, double epsilon, const T *x,
                    const T *weight, const T *bias, T *y) {
  for (int64_t row = blockIdx.x; row < s.rows; row += gridDim.x) {
    const T *in = x + row * s.width;
    T *out = y + row * s.width;
    int64_t slice = row / s.rowsPerSlice;
    const T *w = weight + slice * s.width, *b = bias + slice * s.width;
    double sum = 0;
    for (int64_t i = threadIdx.x; i < s.width; i += Threads)
      sum += static_cast<double>(in[i]);
    double mean =
        blockReduce<Threads>(sum, SumOp(), 0.0) / static_cast<double>(s.width);
    double squares = 0;
    for (int64_t i = threadIdx.x; i < s.width; i += Threads) {
      double centered = static_cast<double>(in[i]) - mean;
      squares += centered * centered;
    }
    double variance = blockReduce<Threads>(squares, SumOp(), 0.0) /
                      static_cast<double>(s.width);
    double deviation = sqrt(variance + epsilon);
    for (int64_t i = threadIdx.x; i < s.width; i += Threads)
      out[i] =
          static_cast<T>(static_cast<double>(w[i]) *
                             (static_cast<double>(in[i]) - mean) / deviation +
                         static_cast<double>(b[i]));
  }
}

/// The (log-)softmax of rows of `axis` contiguous elements, a block each.
template <int Threads, typename T>
__global__ void __launch_bounds__(Threads)
    softmaxRowsKernel(int64_t rows, int64_t axis, bool logarithm, const T *x,
                      T *y) {
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *in = x + row * axis;
    T *out = y + row * axis;
    double maximum = -INFINITY;
    for (int64_t a = threadIdx.x; a < axis; a += Threads)
      maximum = MaxOp()(maximum, static_cast<double>(in[a]));
    maximum = blockReduce<Threads>(maximum, MaxOp(), -INFINITY);
    double sum = 0;
    for (int64_t a = threadIdx.x; a < axis; a += Threads)
      sum += exp(static_cast<double>(in[a]) - maximum);
    sum = blockReduce<Threads>(sum, SumOp(), 0.0);
    if (logarithm) {
      double logSum = log(sum);
      for (int64_t a = threadIdx.x; a < axis; a += Threads)
        out[a] = static_cast<T>(static_cast<double>(in[a]) - maximum - logSum);
    } else {
      for (int64_t a = threadIdx.x; a < axis; a += Threads)
        out[a] =
            static_cast<T>(exp(static_cast<double>(in[a]) - maximum) / sum);
    }
  }
}

/// The (log-)softmax along the middle dimension of [outer, axis, inner],
/// a thread per (outer, inner) column.
template <typename T>
__global__ void softmaxColumnsKernel(AxisSizes s, bool logarithm, const T *x,
                                     T *y) {
  int64_t columns = s.outer * s.inner;
  for (int64_t e = gridStart(); e < columns; e += gridStride()) {
    int64_t o = e / s.inner, i = e % s.inner;
    const T *in = x + o * s.axis * s.inner + i;
    T *out = y + o * s.axis * s.inner + i;
    double maximum = -INFINITY;
    for (int64_t a = 0; a < s.axis; ++a)
      maximum = MaxOp()(maximum, static_cast<double>(in[a * s.inner]));
    double sum = 0;
    for (int64_t a = 0; a < s.axis; ++a)
      sum += exp(static_cast<double>(in[a * s.inner]) - maximum);
    if (logarithm) {
      double logSum = log(sum);
      for (int64_t a = 0; a < s.axis; ++a)
        out[a * s.inner] = static_cast<T>(static_cast<double>(in[a * s.inner]) -
                                          maximum - logSum);
    } else {
      for (int64_t a = 0; a < s.axis; ++a)
        out[a * s.inner] = static_cast<T>(
            exp(static_cast<double>(in[a * s.inner]) - maximum) / sum);
    }
  }
}
} // namespace

/// The blocks of a one-block-per-item launch over `items`.
static unsigned blocksOf(int64_t items) {
  return static_cast<unsigned>(std::min(items, kMaxBlocks));
}

KernelStatus CudaBackend::batchNorm(metart_dtype dtype,
                                    const BatchNormSizes &sizes, const void *x,
                                    const void *weight, const void *bias,
                                    double epsilon, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (sizes.statistics == 0 || sizes.count == 0)
    return KernelStatus::ok();
  StridedSpace<3> kept, reduced;
  splitSpace(cpu::coalesce(sizes.space), 1, kept, reduced);
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    auto *in = static_cast<const T *>(x);
    auto *w = static_cast<const T *>(weight), *b = static_cast<const T *>(bias);
    auto *out = static_cast<T *>(y);
    unsigned blocks = blocksOf(sizes.statistics);
    if (threadsForSegment(sizes.count) == 32)
      batchNormKernel<32><<<blocks, 32, 0, stream.get()>>>(
          kept, reduced, sizes.statistics, sizes.count, epsilon, in, w, b, out);
    else
      batchNormKernel<256><<<blocks, 256, 0, stream.get()>>>(
          kept, reduced, sizes.statistics, sizes.count, epsilon, in, w, b, out);
    return checkLaunch("batch_norm");
  });
}

KernelStatus CudaBackend::layerNorm(metart_dtype dtype,
                                    const LayerNormSizes &sizes, const void *x,
                                    const void *weight, const void *bias,
                                    double epsilon, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (sizes.rows == 0 || sizes.width == 0)
    return KernelStatus::ok();
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    auto *in = static_cast<const T *>(x);
    auto *w = static_cast<const T *>(weight), *b = static_cast<const T *>(bias);
    auto *out = static_cast<T *>(y);
    unsigned blocks = blocksOf(sizes.rows);
    if (threadsForSegment(sizes.width) == 32)
      layerNormKernel<32>
          <<<blocks, 32, 0, stream.get()>>>(sizes, epsilon, in, w, b, out);
    else
      layerNormKernel<256>
          <<<blocks, 256, 0, stream.get()>>>(sizes, epsilon, in, w, b, out);
    return checkLaunch("layer_norm");
  });
}

KernelStatus CudaBackend::softmax(metart_dtype dtype, const AxisSizes &sizes,
                                  bool logarithm, const void *x, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  int64_t columns = sizes.outer * sizes.inner;
  if (columns == 0 || sizes.axis == 0)
    return KernelStatus::ok();
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    auto *in = static_cast<const T *>(x);
    auto *out = static_cast<T *>(y);
    cudaStream_t s = stream.get();
    if (sizes.inner > 1)
      softmaxColumnsKernel<<<blocksFor(columns), kThreads, 0, s>>>(
          sizes, logarithm, in, out);
    else if (threadsForSegment(sizes.axis) == 32)
      softmaxRowsKernel<32><<<blocksOf(sizes.outer), 32, 0, s>>>(
          sizes.outer, sizes.axis, logarithm, in, out);
    else
      softmaxRowsKernel<256><<<blocksOf(sizes.outer), 256, 0, s>>>(
          sizes.outer, sizes.axis, logarithm, in, out);
    return checkLaunch(logarithm ? "log_softmax" : "softmax");
  });
}

} // namespace metart::cuda
