//===- StridedIndex.cuh - strided spaces on the device ----------*- C++ -*-===//
//
// Transposes, broadcasts, reductions and batch normalisation receive a
// strided iteration space (KernelSizes.h). On the device a thread finds the
// operands' offsets of the space's i-th element (row-major) by dividing i
// by the sizes; the spaces are coalesced first (cpu/Strided.h), which
// usually leaves one to three dimensions. Reductions split a space into the
// dimensions that the result keeps and those it reduces.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_STRIDEDINDEX_CUH
#define METART_SRC_CUDA_STRIDEDINDEX_CUH

#include "../KernelSizes.h"

#include <cstdint>

namespace metart::cuda {

/// Adds to `offset[k]` operand k's offset of the `index`-th element of
/// `space` in row-major order.
template <int N>
__device__ inline void addOffsets(const StridedSpace<N> &space, int64_t index,
                                  int64_t (&offset)[N]) {
  for (int d = space.rank - 1; d >= 0; --d) {
    int64_t size = space.size[d];
    int64_t i = index % size;
    index /= size;
    for (int k = 0; k < N; ++k)
      offset[k] += i * space.stride[k][d];
  }
}

/// `addOffsets` for spaces of fewer than 2^32 elements: 32-bit divisions,
/// several times cheaper on the device than 64-bit ones.
template <int N>
__device__ inline void addOffsets32(const StridedSpace<N> &space,
                                    uint32_t index, int64_t (&offset)[N]) {
  for (int d = space.rank - 1; d >= 0; --d) {
    uint32_t size = static_cast<uint32_t>(space.size[d]);
    uint32_t i = index % size;
    index /= size;
    for (int k = 0; k < N; ++k)
      offset[k] += int64_t(i) * space.stride[k][d];
  }
}

/// The number of elements of `space` (1 for rank 0).
template <int N> int64_t elementCount(const StridedSpace<N> &space) {
  int64_t count = 1;
  for (int d = 0; d < space.rank; ++d)
    count *= space.size[d];
  return count;
}

/// Splits `space` into the dimensions along which operand `k` moves
/// (`kept`) and those along which it stays (`reduced`), each in order.
template <int N>
void splitSpace(const StridedSpace<N> &space, int k, StridedSpace<N> &kept,
                StridedSpace<N> &reduced) {
  kept = StridedSpace<N>();
  reduced = StridedSpace<N>();
  for (int d = 0; d < space.rank; ++d) {
    StridedSpace<N> &part = space.stride[k][d] == 0 ? reduced : kept;
    part.size[part.rank] = space.size[d];
    for (int j = 0; j < N; ++j)
      part.stride[j][part.rank] = space.stride[j][d];
    ++part.rank;
  }
}

} // namespace metart::cuda

#endif // METART_SRC_CUDA_STRIDEDINDEX_CUH
