//===- Shape.cu - strided copies and reductions on CUDA -------------------===//
//
// Transpose and broadcast are one strided copy, a thread per result element
// (a plain copy when the coalesced space is contiguous), of elements of any
// type as integers of their size. A reduction splits
// its coalesced space into the dimensions the result keeps and those it
// reduces: when the innermost dimension is kept and there are many results,
// a thread per result walks its elements in order (in chunks summed after
// in order when the results are too few to fill the device); otherwise a
// block per result sums them. Sums are in double, divided by the divisor
// and rounded once, for f32, f64, bf16 and f16 alike.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "../cpu/Strided.h"
#include "CudaBackend.h"
#include "DeviceFloat.cuh"
#include "Reduce.cuh"
#include "Status.h"
#include "StridedIndex.cuh"

namespace metart::cuda {

namespace {
/// y[offset 0] = x[offset 1] for every element of `space`.
template <typename T>
__global__ void copyStridedKernel(StridedSpace<2> space, int64_t count,
                                  const T *x, T *y) {
  bool small = count <= int64_t(UINT32_MAX);
  for (int64_t e = gridStart(); e < count; e += gridStride()) {
    int64_t offset[2] = {0, 0};
    if (small)
      addOffsets32(space, static_cast<uint32_t>(e), offset);
    else
      addOffsets(space, e, offset);
    y[offset[0]] = x[offset[1]];
  }
}

/// x's offset of element `i` of `space` (one dimension, the usual case
/// after coalescing, without a division).
__device__ inline int64_t inputOffset(const StridedSpace<2> &space, int64_t i) {
  if (space.rank == 1)
    return i * space.stride[0][0];
  int64_t offset[2] = {0, 0};
  addOffsets(space, i, offset);
  return offset[0];
}

/// The sum in double of x's elements [first, end) of `reduced` from `base`.
template <typename T>
__device__ double sumFrom(const StridedSpace<2> &reduced, int64_t first,
                          int64_t end, int64_t base, const T *x) {
  double sum = 0;
  if (reduced.rank == 1) {
    int64_t stride = reduced.stride[0][0];
    for (int64_t i = first; i < end; ++i)
      sum += static_cast<double>(wide(x[base + i * stride]));
    return sum;
  }
  for (int64_t i = first; i < end; ++i)
    sum += static_cast<double>(wide(x[base + inputOffset(reduced, i)]));
  return sum;
}

/// A thread per result and chunk of `chunkLength` of its `count` elements,
/// the results fastest (neighbouring threads read neighbouring elements
/// when the innermost dimension is kept): with one chunk y[r] = sum /
/// divisor, else partial[c * results + r] = the chunk's sum.
template <typename T>
__global__ void reduceThreadsKernel(StridedSpace<2> kept,
                                    StridedSpace<2> reduced, int64_t results,
                                    int64_t count, int64_t chunkLength,
                                    int64_t chunks, double divisor, const T *x,
                                    T *y, double *partial) {
  for (int64_t t = gridStart(); t < results * chunks; t += gridStride()) {
    int64_t r = t % results, c = t / results;
    int64_t first = c * chunkLength, end = min(count, first + chunkLength);
    double sum = sumFrom(reduced, first, end, inputOffset(kept, r), x);
    if (chunks == 1)
      y[r] = Store<T>::of(sum / divisor);
    else
      partial[c * results + r] = sum;
  }
}

/// y[r] = (the sum of its chunks' partial sums, in order) / divisor.
template <typename T>
__global__ void sumChunksKernel(int64_t results, int64_t chunks, double divisor,
                                const double *partial, T *y) {
  for (int64_t r = gridStart(); r < results; r += gridStride()) {
    double sum = 0;
    for (int64_t c = 0; c < chunks; ++c)
      sum += partial[c * results + r];
    y[r] = Store<T>::of(sum / divisor);
  }
}

/// The element `i` of result `r`, for the block-per-result reduction.
template <typename T> struct ReducedTerm {
  StridedSpace<2> kept, reduced;
  const T *x;
  __device__ double operator()(int64_t r, int64_t i) const {
    return static_cast<double>(
        wide(x[inputOffset(kept, r) + inputOffset(reduced, i)]));
  }
};

template <typename T> struct StoreMean {
  double divisor;
  T *y;
  __device__ void operator()(int64_t r, double sum) const {
    y[r] = Store<T>::of(sum / divisor);
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
/// A thread per result leaves it idle when the results are few for the
/// device's threads (a bias gradient: 2048 sums of 4096 rows): each
/// result's elements are split into chunks of at least kMinThreadChunk,
/// to about kSplitThreads threads in all, the chunks summed after in order.
constexpr int64_t kMinThreadChunk = 32, kSplitThreads = 262144;
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
  // A copy: elements move as integers of their size.
  auto copy = [&](auto t) {
    using T = decltype(t);
    copyStridedKernel<<<blocksFor(count), kThreads, 0, stream.get()>>>(
        s, count, static_cast<const T *>(x), static_cast<T *>(y));
    return checkLaunch("strided copy");
  };
  if (size == 2)
    return copy(uint16_t());
  return size == 8 ? copy(uint64_t()) : copy(uint32_t());
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
  return withDeviceFloat(dtype, [&](auto t) -> KernelStatus {
    using T = decltype(t);
    auto *in = static_cast<const T *>(x);
    auto *out = static_cast<T *>(y);
    bool innerKept = s.rank > 0 && s.stride[1][s.rank - 1] != 0;
    if ((innerKept && resultCount >= 1024) || count < 32) {
      int64_t chunks =
          std::clamp<int64_t>((kSplitThreads + resultCount - 1) / resultCount,
                              1, std::max<int64_t>(1, count / kMinThreadChunk));
      int64_t chunkLength = (count + chunks - 1) / chunks;
      chunks = (count + chunkLength - 1) / chunkLength;
      double *partial = nullptr;
      if (chunks > 1) {
        size_t bytes = resultCount * chunks * sizeof(double);
        partial = static_cast<double *>(workspace.get(bytes));
        if (!partial)
          return workspaceExhausted(bytes);
      }
      reduceThreadsKernel<<<blocksFor(resultCount * chunks), kThreads, 0, st>>>(
          kept, reduced, resultCount, count, chunkLength, chunks, divisor, in,
          out, partial);
      if (KernelStatus status = checkLaunch("reduction");
          status.failed() || chunks == 1)
        return status;
      sumChunksKernel<<<blocksFor(resultCount), kThreads, 0, st>>>(
          resultCount, chunks, divisor, partial, out);
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
