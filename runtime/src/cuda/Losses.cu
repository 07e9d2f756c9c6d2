//===- Losses.cu - losses on CUDA -----------------------------------------===//
//
// Mean squared error and softmax cross-entropy: one mean per batch entry
// over its samples, a block per entry summing in double. The cross-entropy
// of a sample, log(sum_c exp(z_c - m)) - (z_label - m) with m the row's
// maximum, is computed by a warp per sample into the workspace first;
// labels are checked before, as the CPU backend checks them.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "CudaBackend.h"
#include "Reduce.cuh"
#include "Status.h"

#include <cmath>

namespace metart::cuda {

namespace {
template <typename T> struct SquaredDifference {
  const T *prediction, *target;
  int64_t samples;
  __device__ double operator()(int64_t b, int64_t i) const {
    double difference = static_cast<double>(prediction[b * samples + i]) -
                        static_cast<double>(target[b * samples + i]);
    return difference * difference;
  }
};

struct SampleLoss {
  const double *losses;
  int64_t samples;
  __device__ double operator()(int64_t b, int64_t i) const {
    return losses[b * samples + i];
  }
};

/// y[b] = sum / samples.
template <typename T> struct StoreMean {
  T *y;
  int64_t samples;
  __device__ void operator()(int64_t b, double sum) const {
    y[b] = static_cast<T>(sum / static_cast<double>(samples));
  }
};

/// losses[i] = -log_softmax(logits row i)[labels[i]], a warp per row.
template <typename T, typename I>
__global__ void crossEntropyRowsKernel(int64_t rows, int64_t classes,
                                       const T *logits, const I *labels,
                                       double *losses) {
  int lane = threadIdx.x % 32;
  int64_t warps = gridStride() / 32;
  for (int64_t i = gridStart() / 32; i < rows; i += warps) {
    const T *row = logits + i * classes;
    double maximum = -INFINITY;
    for (int64_t c = lane; c < classes; c += 32)
      maximum = MaxOp()(maximum, static_cast<double>(row[c]));
    maximum = warpReduce(maximum, MaxOp());
    double exponentials = 0;
    for (int64_t c = lane; c < classes; c += 32)
      exponentials += exp(static_cast<double>(row[c]) - maximum);
    exponentials = warpReduce(exponentials, SumOp());
    if (lane == 0) {
      int64_t label = static_cast<int64_t>(labels[i]);
      losses[i] =
          log(exponentials) - (static_cast<double>(row[label]) - maximum);
    }
  }
}

/// hits[i] = 1 when row i's first largest logit is labels[i], else 0: a
/// thread per row (rows have a few classes in few-shot evaluation).
template <typename T, typename I>
__global__ void accuracyRowsKernel(int64_t rows, int64_t classes,
                                   const T *logits, const I *labels,
                                   double *hits) {
  for (int64_t i = gridStart(); i < rows; i += gridStride()) {
    const T *row = logits + i * classes;
    int64_t best = 0;
    for (int64_t c = 1; c < classes; ++c)
      if (row[c] > row[best])
        best = c;
    hits[i] = best == static_cast<int64_t>(labels[i]) ? 1.0 : 0.0;
  }
}
} // namespace

KernelStatus CudaBackend::mseLoss(metart_dtype dtype, const LossSizes &sizes,
                                  const void *prediction, const void *target,
                                  void *y) {
  if (KernelStatus status = activate(); status.failed() || sizes.entries == 0)
    return status;
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    return checkCuda(
        launchSegmentSum(
            stream.get(), sizes.entries, sizes.samples,
            SquaredDifference<T>{static_cast<const T *>(prediction),
                                 static_cast<const T *>(target), sizes.samples},
            StoreMean<T>{static_cast<T *>(y), sizes.samples}),
        "launching the mse_loss kernel");
  });
}

KernelStatus CudaBackend::crossEntropyLoss(metart_dtype dtype,
                                           metart_dtype labelType,
                                           const LossSizes &sizes,
                                           const void *logits,
                                           const void *labels, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  int64_t rows = sizes.entries * sizes.samples;
  if (KernelStatus status =
          checkRange("label", labelType, labels, rows, sizes.classes);
      status.failed() || sizes.entries == 0)
    return status;
  double *losses = nullptr;
  if (rows > 0) {
    size_t bytes = static_cast<size_t>(rows) * sizeof(double);
    losses = static_cast<double *>(workspace.get(bytes));
    if (!losses)
      return workspaceExhausted(bytes);
  }
  return cpu::withFloatAndIndex(dtype, labelType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    cudaStream_t s = stream.get();
    if (rows > 0) {
      crossEntropyRowsKernel<<<blocksFor(rows * 32), kThreads, 0, s>>>(
          rows, sizes.classes, static_cast<const T *>(logits),
          static_cast<const I *>(labels), losses);
      if (KernelStatus status = checkLaunch("cross_entropy_loss");
          status.failed())
        return status;
    }
    return checkCuda(
        launchSegmentSum(s, sizes.entries, sizes.samples,
                         SampleLoss{losses, sizes.samples},
                         StoreMean<T>{static_cast<T *>(y), sizes.samples}),
        "launching the cross_entropy_loss kernel");
  });
}

KernelStatus CudaBackend::accuracy(metart_dtype dtype, metart_dtype labelType,
                                   const LossSizes &sizes, const void *logits,
                                   const void *labels, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  int64_t rows = sizes.entries * sizes.samples;
  if (KernelStatus status =
          checkRange("label", labelType, labels, rows, sizes.classes);
      status.failed() || sizes.entries == 0)
    return status;
  double *hits = nullptr;
  if (rows > 0) {
    size_t bytes = static_cast<size_t>(rows) * sizeof(double);
    hits = static_cast<double *>(workspace.get(bytes));
    if (!hits)
      return workspaceExhausted(bytes);
  }
  return cpu::withFloatAndIndex(dtype, labelType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    cudaStream_t s = stream.get();
    if (rows > 0) {
      accuracyRowsKernel<<<blocksFor(rows), kThreads, 0, s>>>(
          rows, sizes.classes, static_cast<const T *>(logits),
          static_cast<const I *>(labels), hits);
      if (KernelStatus status = checkLaunch("accuracy"); status.failed())
        return status;
    }
    return checkCuda(
        launchSegmentSum(s, sizes.entries, sizes.samples,
                         SampleLoss{hits, sizes.samples},
                         StoreMean<T>{static_cast<T *>(y), sizes.samples}),
        "launching the accuracy kernel");
  });
}

} // namespace metart::cuda
