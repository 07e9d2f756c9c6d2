//===- Strided.h - strided walks over iteration spaces ----------*- C++ -*-===//
//
// Transposes, broadcasts, reductions and batch normalisation walk an
// iteration space in which each operand has its own stride per dimension.
// `forEachRow` first simplifies the space (drops dimensions of size 1,
// merges neighbours that every operand walks as one) and then hands the
// innermost dimension to a callback as one row, so that the callback's loop
// is a plain (usually contiguous) loop the compiler can vectorise.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_STRIDED_H
#define METART_SRC_CPU_STRIDED_H

#include "../KernelSizes.h"
#include "Parallel.h"
#include <algorithm>

namespace metart::cpu {

/// `space` without dimensions of size 1 and with neighbouring dimensions
/// merged wherever, for every operand, the outer one steps exactly over the
/// inner one.
template <int N> StridedSpace<N> coalesce(const StridedSpace<N> &space) {
  StridedSpace<N> result;
  for (int d = 0; d < space.rank; ++d) {
    if (space.size[d] == 1)
      continue;
    int last = result.rank - 1;
    bool mergeable = last >= 0;
    for (int k = 0; k < N && mergeable; ++k)
      mergeable = result.stride[k][last] == space.stride[k][d] * space.size[d];
    if (mergeable) {
      result.size[last] *= space.size[d];
      for (int k = 0; k < N; ++k)
        result.stride[k][last] = space.stride[k][d];
      continue;
    }
    result.size[result.rank] = space.size[d];
    for (int k = 0; k < N; ++k)
      result.stride[k][result.rank] = space.stride[k][d];
    ++result.rank;
  }
  return result;
}

/// Calls `row(offset, length, stride)` for every row of the innermost
/// dimension of the (coalesced) space, in row-major order: `offset[k]` is
/// operand k's element offset of the row's first element and `stride[k]`
/// its step along the row. A space with an empty dimension has no rows; a
/// space of rank 0 has one row of length 1.
template <int N, typename Row>
void forEachRow(const StridedSpace<N> &original, Row &&row) {
  StridedSpace<N> space = coalesce(original);
  for (int d = 0; d < space.rank; ++d)
    if (space.size[d] == 0)
      return;
  int64_t offset[N] = {};
  int64_t innerStride[N] = {};
  if (space.rank == 0) {
    row(offset, int64_t(1), innerStride);
    return;
  }
  int inner = space.rank - 1;
  for (int k = 0; k < N; ++k)
    innerStride[k] = space.stride[k][inner];
  int64_t index[kMaxRank] = {};
  while (true) {
    row(offset, space.size[inner], innerStride);
    // Odometer step over the outer dimensions, the last one fastest.
    int d = inner - 1;
    for (; d >= 0; --d) {
      for (int k = 0; k < N; ++k)
        offset[k] += space.stride[k][d];
      if (++index[d] < space.size[d])
        break;
      for (int k = 0; k < N; ++k)
        offset[k] -= space.stride[k][d] * space.size[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// `forEachRow`, with the rows split over the backend's threads when the
/// space is large: along its outermost (coalesced) dimension, or along the
/// row when the space is one row. Only where every operand in `written` (a
/// mask of operand indices) has a non-zero stride, so that no two threads
/// write the same element; otherwise the walk stays on one thread.
template <int N, typename Row>
void forEachRowParallel(const StridedSpace<N> &original, unsigned written,
                        Row &&row) {
  StridedSpace<N> space = coalesce(original);
  int64_t total = 1;
  for (int d = 0; d < space.rank; ++d)
    total *= space.size[d];
  bool splittable = space.rank > 0 && total >= 2 * kElementGrain;
  for (int k = 0; k < N && splittable; ++k)
    if (written & (1u << k))
      splittable = space.stride[k][0] != 0;
  if (!splittable)
    return forEachRow(space, row);
  if (space.rank == 1) {
    parallelFor(space.size[0], kElementGrain, [&](int64_t begin, int64_t end) {
      int64_t offset[N], stride[N];
      for (int k = 0; k < N; ++k) {
        stride[k] = space.stride[k][0];
        offset[k] = begin * stride[k];
      }
      row(offset, end - begin, stride);
    });
    return;
  }
  int64_t perOuter = total / space.size[0];
  int64_t grain =
      std::max<int64_t>(1, kElementGrain / std::max<int64_t>(perOuter, 1));
  parallelFor(space.size[0], grain, [&](int64_t begin, int64_t end) {
    StridedSpace<N> part = space;
    part.size[0] = end - begin;
    forEachRow(part, [&](const int64_t *offset, int64_t length,
                         const int64_t *stride) {
      int64_t shifted[N];
      for (int k = 0; k < N; ++k)
        shifted[k] = offset[k] + begin * space.stride[k][0];
      row(shifted, length, stride);
    });
  });
}

} // namespace metart::cpu

#endif // METART_SRC_CPU_STRIDED_H
