//===- Indexing.cu - integer-indexed kernels on CUDA ----------------------===//
//
// Table lookups, their scatter-add derivative (atomicAdd: ids may repeat)
// and one-hot encoding. Every id or label is checked before anything is
// written: a first kernel finds the lowest out-of-range position and the
// index there, which are read back (the one wait of these kernels; a
// recording reads them after each replay instead) and reported as the CPU
// backend reports them, METART_ERROR_OUT_OF_RANGE naming the value, its
// position and the range.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "CudaBackend.h"
#include "Launch.cuh"
#include "Status.h"

namespace metart::cuda {

namespace {
/// Lowers `first` to every position whose index lies outside [0, bound).
template <typename I>
__global__ void firstOutOfRangeKernel(int64_t count, const I *indices,
                                      int64_t bound,
                                      unsigned long long *first) {
  for (int64_t i = gridStart(); i < count; i += gridStride()) {
    int64_t value = static_cast<int64_t>(indices[i]);
    if (value < 0 || value >= bound)
      atomicMin(first, static_cast<unsigned long long>(i));
  }
}

/// Copies the index at the position that `firstOutOfRangeKernel` found,
/// if any, into the finding (one thread).
template <typename I>
__global__ void valueAtFindingKernel(const I *indices, RangeSlot *slot) {
  if (slot->position != ~0ull)
    slot->value = static_cast<long long>(indices[slot->position]);
}

/// The row of the table (all slices) that position `s` reads.
template <typename I>
__device__ int64_t rowOf(const LookupSizes &sizes, const I *ids, int64_t s) {
  return (s / sizes.positionsPerSlice) * sizes.rows +
         static_cast<int64_t>(ids[s]);
}

template <typename T, typename I>
__global__ void embeddingKernel(LookupSizes sizes, const I *ids, const T *table,
                                T *y) {
  int64_t total = sizes.positions * sizes.width;
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t s = e / sizes.width, d = e % sizes.width;
    y[e] = table[rowOf(sizes, ids, s) * sizes.width + d];
  }
}

template <typename T, typename I>
__global__ void embeddingBackwardKernel(LookupSizes sizes, const I *ids,
                                        const T *grad, T *table) {
  int64_t total = sizes.positions * sizes.width;
  for (int64_t e = gridStart(); e < total; e += gridStride()) {
    int64_t s = e / sizes.width, d = e % sizes.width;
    atomicAdd(table + rowOf(sizes, ids, s) * sizes.width + d, grad[e]);
  }
}

template <typename T, typename I>
__global__ void oneHotKernel(int64_t count, int64_t classes, const I *labels,
                             T *y) {
  int64_t total = count * classes;
  for (int64_t e = gridStart(); e < total; e += gridStride())
    y[e] =
        static_cast<int64_t>(labels[e / classes]) == e % classes ? T(1) : T(0);
}
} // namespace

KernelStatus CudaBackend::queueRangeCheck(metart_dtype type,
                                          const void *indices, int64_t count,
                                          int64_t bound, RangeSlot *slot) {
  cudaStream_t s = stream.get();
  KernelStatus status = checkCuda(cudaMemsetAsync(slot, 0xff, sizeof(*slot), s),
                                  "cudaMemsetAsync");
  if (status.failed())
    return status;
  return cpu::withIndex(type, [&](auto i) {
    using I = decltype(i);
    firstOutOfRangeKernel<<<blocksFor(count), kThreads, 0, s>>>(
        count, static_cast<const I *>(indices), bound, &slot->position);
    KernelStatus launched = checkLaunch("index range check");
    if (launched.failed())
      return launched;
    valueAtFindingKernel<<<1, 1, 0, s>>>(static_cast<const I *>(indices), slot);
    return checkLaunch("index range check");
  });
}

KernelStatus CudaBackend::checkRange(const char *what, metart_dtype type,
                                     const void *indices, int64_t count,
                                     int64_t bound) {
  if (count == 0)
    return KernelStatus::ok();
  if (capturing()) {
    std::vector<Recording::Check> &checks = recording->checks;
    if (checks.size() == Recording::kMaxChecks)
      return {METART_ERROR_UNSUPPORTED,
              "a recorded CUDA graph holds at most " +
                  std::to_string(Recording::kMaxChecks) + " index checks"};
    RangeSlot *slot = recording->slots + checks.size();
    checks.push_back({what, bound});
    return queueRangeCheck(type, indices, count, bound, slot);
  }
  KernelStatus status = queueRangeCheck(type, indices, count, bound, rangeSlot);
  RangeSlot finding{};
  if (!status.failed())
    status = checkCuda(cudaMemcpyAsync(&finding, rangeSlot, sizeof(finding),
                                       cudaMemcpyDeviceToHost, stream.get()),
                       "cudaMemcpyAsync (device to host)");
  if (!status.failed())
    status = stream.synchronize();
  if (status.failed() || finding.position == ~0ull)
    return status;
  return {METART_ERROR_OUT_OF_RANGE,
          outOfRangeMessage(what, finding.value, finding.position, bound)};
}

KernelStatus CudaBackend::embedding(metart_dtype dtype, metart_dtype idType,
                                    const LookupSizes &sizes, const void *ids,
                                    const void *table, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (KernelStatus status =
          checkRange("id", idType, ids, sizes.positions, sizes.rows);
      status.failed())
    return status;
  int64_t total = sizes.positions * sizes.width;
  if (total == 0)
    return KernelStatus::ok();
  return cpu::withFloatAndIndex(dtype, idType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    embeddingKernel<<<blocksFor(total), kThreads, 0, stream.get()>>>(
        sizes, static_cast<const I *>(ids), static_cast<const T *>(table),
        static_cast<T *>(y));
    return checkLaunch("embedding");
  });
}

KernelStatus CudaBackend::embeddingBackward(metart_dtype dtype,
                                            metart_dtype idType,
                                            const LookupSizes &sizes,
                                            const void *ids, const void *grad,
                                            void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (KernelStatus status =
          checkRange("id", idType, ids, sizes.positions, sizes.rows);
      status.failed())
    return status;
  int64_t tableSize = sizes.slices * sizes.rows * sizes.width;
  if (tableSize == 0)
    return KernelStatus::ok();
  if (KernelStatus status = checkCuda(
          cudaMemsetAsync(y, 0, tableSize * dtypeSize(dtype), stream.get()),
          "cudaMemsetAsync");
      status.failed())
    return status;
  int64_t total = sizes.positions * sizes.width;
  if (total == 0)
    return KernelStatus::ok();
  return cpu::withFloatAndIndex(dtype, idType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    embeddingBackwardKernel<<<blocksFor(total), kThreads, 0, stream.get()>>>(
        sizes, static_cast<const I *>(ids), static_cast<const T *>(grad),
        static_cast<T *>(y));
    return checkLaunch("embedding_backward");
  });
}

namespace {
/// The most experts a routing thread keeps slot counters for.
constexpr int64_t kMaxRoutedExperts = 256;

/// One thread per group: each token's choices by rank (how many experts
/// are more probable, or as probable with a lower index), placed choice
/// rank by choice rank, tokens in order; y is zero already.
template <typename T>
__global__ void moeDispatchKernel(RoutingSizes sizes, int64_t topK,
                                  const T *probs, T *y) {
  int64_t n = sizes.tokens, e = sizes.experts, c = sizes.capacity;
  int64_t used[kMaxRoutedExperts];
  for (int64_t g = gridStart(); g < sizes.groups; g += gridStride()) {
    for (int64_t expert = 0; expert < e; ++expert)
      used[expert] = 0;
    const T *pg = probs + g * n * e;
    for (int64_t r = 0; r < topK; ++r)
      for (int64_t token = 0; token < n; ++token) {
        const T *p = pg + token * e;
        for (int64_t expert = 0; expert < e; ++expert) {
          int64_t rank = 0;
          for (int64_t o = 0; o < e; ++o)
            rank += p[o] > p[expert] || (p[o] == p[expert] && o < expert);
          if (rank == r) {
            if (used[expert] < c)
              y[((g * n + token) * e + expert) * c + used[expert]++] = T(1);
            break;
          }
        }
      }
  }
}
} // namespace

KernelStatus CudaBackend::moeDispatch(metart_dtype dtype,
                                      const RoutingSizes &sizes, int64_t topK,
                                      const void *probs, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (sizes.experts > kMaxRoutedExperts)
    return {METART_ERROR_UNSUPPORTED,
            "routing over " + std::to_string(sizes.experts) +
                " experts: the CUDA kernel counts slots for at most " +
                std::to_string(kMaxRoutedExperts)};
  int64_t total = sizes.groups * sizes.tokens * sizes.experts * sizes.capacity;
  if (total == 0)
    return KernelStatus::ok();
  return cpu::withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    KernelStatus cleared =
        checkCuda(cudaMemsetAsync(y, 0, total * sizeof(T), stream.get()),
                  "cudaMemsetAsync");
    if (cleared.failed())
      return cleared;
    moeDispatchKernel<<<blocksFor(sizes.groups), kThreads, 0, stream.get()>>>(
        sizes, topK, static_cast<const T *>(probs), static_cast<T *>(y));
    return checkLaunch("moe_dispatch");
  });
}

KernelStatus CudaBackend::oneHot(metart_dtype dtype, metart_dtype labelType,
                                 int64_t count, int64_t classes,
                                 const void *labels, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (KernelStatus status =
          checkRange("label", labelType, labels, count, classes);
      status.failed())
    return status;
  int64_t total = count * classes;
  if (total == 0)
    return KernelStatus::ok();
  return cpu::withFloatAndIndex(dtype, labelType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    oneHotKernel<<<blocksFor(total), kThreads, 0, stream.get()>>>(
        count, classes, static_cast<const I *>(labels), static_cast<T *>(y));
    return checkLaunch("one_hot");
  });
}

} // namespace metart::cuda
