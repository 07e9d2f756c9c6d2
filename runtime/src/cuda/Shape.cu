//===- Shape.cu - strided copies and reductions on CUDA -------------------===//
//
// Transpose and broadcast are one strided copy, a thread per result element
// (a plain copy when the coalesced space is contiguous). A reduction splits
// its coalesced space into the dimensions the result keeps and those it
// reduces: when the innermost dimension is kept and there are many results,
// a thread per result walks its elements in order (as the CPU backend
// adds them); otherwise a block per result sums them. Sums are in double,
// divided by the divisor and rounded once.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "../cpu/Strided.h"
#include "CudaBackend.h"
#include "Reduce.cuh"
#include "Status.h"
#include "StridedIndex.cuh"

namespace metart::cuda {

namespace {
/// y[offset 0] = x[offset 1] for every element of `space`.
template <typename T>
__global__ void copyStridedKernel(StridedSpace<2> space, int64_t count,
                                  const T *x, T *y) {
  for (int64_t e = gridStart(); e < count; e += gridStride()) {
    int64_t offset[2] = {0, 0};
    addOffsets(space, e, offset);
    y[offset[0]] = x[offset[1]];
  }
}

/// The sum in double of x over `reduced` from `base`.
template <typename T>
__device__ double sumFrom(const StridedSpace<2> &reduced, int64_t count,
                          int64_t base, const T *x) {
  double sum = 0;
  for (int64_t r = 0; r < count; ++r) {
    int64_t offset[2] = {base, 0};
    addOffsets(reduced, r, offset);
    sum += static_cast<double>(x[offset[0]]);
  }
  return sum;
}

/// A thread per result: y[r] = (sum of its `count` elements) / divisor.
template <typename T>
__global__ void reduceThreadsKernel(StridedSpace<2> kept,
                                    StridedSpace<2> reduced, int64_t results,
                                    int64_t count, double divisor, const T *x,
                                    T *y) {
  for (int64_t r = gridStart(); r < results; r += gridStride()) {
    int64_t base[2] = {0, 0};
    addOffsets(kept, r, base);
    y[r] = static_cast<T>(sumFrom(reduced, count, base[0], x) / divisor);
  }
}

/// The element `i` of result `r`, for the block-per-result reduction.
template <typename T> struct ReducedTerm {
  StridedSpace<2> kept, reduced;
  const T *x;
  __device__ double operator()(int64_t r, int64_t i) const {
    int64_t offset[2] = {0, 0};
    addOffsets(kept, r, offset);
    addOffsets(reduced, i, offset);
    return static_cast<double>(x[offset[0]]);
  }
};

template <typename T> struct StoreMean {
  double divisor;
  T *y;
  __device__ void operator()(int64_t r, double sum) const {
    y[r] = static_cast<T>(sum / divisor);
  }
};

/// The element `i` of chunk `p % chunks` of result `p / chunks`, for the
/// first pass of a split reduction (0 past the result's end).
template <typename T> struct ChunkTerm {
  ReducedTerm<T> term;
  int64_t chunks, chunkLength, count;
  __device__ double operator()(int64_t p, int64_t i) const {
    int64_t j = (p % chunks) * chunkLength + i;
    return j < count ? term(p / chunks, j) : 0.0;
  }
};

struct StorePartial {
  double *partial;
  __device__ void operator()(int64_t p, double sum) const { partial[p] = sum; }
};

/// The partial sum `i` of result `r`, for the second pass.
struct PartialTerm {
  const double *partial;
  int64_t chunks;
  __device__ double operator()(int64_t r, int64_t i) const {
    return partial[r * chunks + i];
  }
};

/// A block per result leaves most of the device idle when there are few
/// long results (batch norm's statistics: one per channel): they are
/// split into chunks of at least this many elements, to about this many
/// blocks in all, and the chunks' sums (in a fixed order) summed after.
constexpr int64_t kMinChunk = 4096, kSplitBlocks = 512;
} // namespace

KernelStatus CudaBackend::copyStrided(metart_dtype dtype,
                                      const StridedSpace<2> &space,
                                      const void *x, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  StridedSpace<2> s = cpu::coalesce(space);
  int64_t count = elementCount(s);
  if (count == 0)
    return KernelStatus::ok();
  size_t size = dtypeSize(dtype);
  if (s.rank == 0 ||
      (s.rank == 1 && s.stride[0][0] == 1 && s.stride[1][0] == 1))
    return checkCuda(cudaMemcpyAsync(y, x, count * size,
                                     cudaMemcpyDeviceToDevice, stream.get()),
                     "cudaMemcpyAsync (device to device)");
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    copyStridedKernel<<<blocksFor(count), kThreads, 0, stream.get()>>>(
        s, count, static_cast<const T *>(x), static_cast<T *>(y));
    return checkLaunch("strided copy");
  });
}

KernelStatus CudaBackend::reduceSum(metart_dtype dtype,
                                    const StridedSpace<2> &space,
                                    int64_t resultCount, double divisor,
                                    const void *x, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (resultCount == 0)
    return KernelStatus::ok();
  StridedSpace<2> s = cpu::coalesce(space), kept, reduced;
  splitSpace(s, 1, kept, reduced);
  int64_t count = elementCount(reduced);
  // Sums of nothing: 0 / divisor, as on the CPU.
  if (count == 0)
    return fill(dtype, resultCount, y, 0.0 / divisor);
  cudaStream_t st = stream.get();
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    auto *in = static_cast<const T *>(x);
    auto *out = static_cast<T *>(y);
    bool innerKept = s.rank > 0 && s.stride[1][s.rank - 1] != 0;
    if ((innerKept && resultCount >= 1024) || count < 32) {
      reduceThreadsKernel<<<blocksFor(resultCount), kThreads, 0, st>>>(
          kept, reduced, resultCount, count, divisor, in, out);
      return checkLaunch("reduction");
    }
    ReducedTerm<T> term{kept, reduced, in};
    int64_t chunks = std::min((kSplitBlocks + resultCount - 1) / resultCount,
                              count / kMinChunk);
    if (chunks < 2)
      return checkCuda(launchSegmentSum(st, resultCount, count, term,
                                        StoreMean<T>{divisor, out}),
                       "launching the reduction kernel");
    auto *partial = static_cast<double *>(
        workspace.get(resultCount * chunks * sizeof(double)));
    if (!partial)
      return workspaceExhausted(resultCount * chunks * sizeof(double));
    int64_t chunkLength = (count + chunks - 1) / chunks;
    KernelStatus status = checkCuda(
        launchSegmentSum(st, resultCount * chunks, chunkLength,
                         ChunkTerm<T>{term, chunks, chunkLength, count},
                         StorePartial{partial}),
        "launching the reduction kernel");
    if (status.failed())
      return status;
    return checkCuda(launchSegmentSum(st, resultCount, chunks,
                                      PartialTerm{partial, chunks},
                                      StoreMean<T>{divisor, out}),
                     "launching the reduction kernel");
  });
}

} // namespace metart::cuda
