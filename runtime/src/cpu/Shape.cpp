//===- Shape.cpp - strided copies and reductions on the CPU ---------------===//
//
// Transpose and broadcast are one strided copy: the result is walked in
// order and each element read from the input through its strides (0 along
// broadcast dimensions). Reductions walk the input in order and add each
// element into the result through its strides (0 along reduced dimensions);
// a row along a reduced dimension is summed first, a row along a kept one
// is added elementwise. Sums are kept in double and rounded once.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"
#include "Strided.h"

#include <algorithm>

namespace metart::cpu {

/// A strided copy whose two innermost dimensions swap: the result walks
/// the last one contiguously while the input walks the one before it
/// contiguously (a transpose of the last two dimensions, batched over the
/// outer ones). Copied in square tiles, so that both sides read and write
/// whole cache lines: an element-by-element walk reads the input a cache
/// line per element, which power-of-two strides make worse by mapping the
/// lines onto the same cache sets.
template <typename T>
static bool copySwappedTiles(const StridedSpace<2> &original, const T *x,
                             T *y) {
  StridedSpace<2> space = coalesce(original);
  int r = space.rank;
  if (r < 2)
    return false;
  int64_t rows = space.size[r - 2], cols = space.size[r - 1];
  int64_t outRow = space.stride[0][r - 2], inCol = space.stride[1][r - 1];
  if (space.stride[0][r - 1] != 1 || space.stride[1][r - 2] != 1 ||
      inCol == 0 || outRow == 0 || rows < 8 || cols < 8)
    return false;
  constexpr int64_t kTile = 32;
  int64_t rowTiles = (rows + kTile - 1) / kTile;
  int64_t outer = 1;
  for (int d = 0; d < r - 2; ++d)
    outer *= space.size[d];
  int64_t grain = std::max<int64_t>(1, kElementGrain / (kTile * cols));
  parallelFor(outer * rowTiles, grain, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      // The outer index of this task, last outer dimension fastest.
      int64_t index = task / rowTiles, outOffset = 0, inOffset = 0;
      for (int d = r - 3; d >= 0; --d) {
        int64_t i = index % space.size[d];
        index /= space.size[d];
        outOffset += i * space.stride[0][d];
        inOffset += i * space.stride[1][d];
      }
      int64_t i0 = (task % rowTiles) * kTile;
      int64_t i1 = std::min(rows, i0 + kTile);
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        int64_t j1 = std::min(cols, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i) {
          T *out = y + outOffset + i * outRow;
          const T *in = x + inOffset + i;
          for (int64_t j = j0; j < j1; ++j)
            out[j] = in[j * inCol];
        }
      }
    }
  });
  return true;
}

template <typename T>
static void copyStridedOf(const StridedSpace<2> &space, const T *x, T *y) {
  if (copySwappedTiles(space, x, y))
    return;
  forEachRowParallel(
      space, 1u << 0,
      [&](const int64_t *offset, int64_t length, const int64_t *stride) {
        T *out = y + offset[0];
        const T *in = x + offset[1];
        if (stride[0] == 1 && stride[1] == 1)
          std::copy(in, in + length, out);
        else if (stride[0] == 1 && stride[1] == 0)
          std::fill(out, out + length, *in);
        else
          for (int64_t j = 0; j < length; ++j)
            out[j * stride[0]] = in[j * stride[1]];
      });
}

KernelStatus CpuBackend::copyStrided(metart_dtype dtype,
                                     const StridedSpace<2> &space,
                                     const void *x, void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    copyStridedOf(space, static_cast<const T *>(x), static_cast<T *>(y));
  });
  return KernelStatus::ok();
}

/// Sums in double into `sums` (`resultCount` of them), then writes each
/// divided by `divisor`, rounded once, to `y`.
template <typename T>
static void reduceSumOf(const StridedSpace<2> &space, int64_t resultCount,
                        double divisor, const T *x, double *sums, T *y) {
  std::fill(sums, sums + resultCount, 0.0);
  // Rows of different sums may run on different threads; the rows of one
  // sum stay on one thread, in order, so the result does not depend on the
  // number of threads.
  forEachRowParallel(
      space, 1u << 1,
      [&](const int64_t *offset, int64_t length, const int64_t *stride) {
        const T *in = x + offset[0];
        double *out = sums + offset[1];
        if (stride[1] == 0) {
          // Four partial sums: the additions do not wait on each
          // other, so the loop runs at the adder's throughput.
          double partial[4] = {0, 0, 0, 0};
          int64_t j = 0;
          for (; j + 4 <= length; j += 4)
            for (int64_t k = 0; k < 4; ++k)
              partial[k] += static_cast<double>(in[(j + k) * stride[0]]);
          for (; j < length; ++j)
            partial[0] += static_cast<double>(in[j * stride[0]]);
          *out += (partial[0] + partial[1]) + (partial[2] + partial[3]);
          return;
        }
        if (stride[0] == 1 && stride[1] == 1) {
          for (int64_t j = 0; j < length; ++j)
            out[j] += static_cast<double>(in[j]);
          return;
        }
        for (int64_t j = 0; j < length; ++j)
          out[j * stride[1]] += static_cast<double>(in[j * stride[0]]);
      });
  for (int64_t i = 0; i < resultCount; ++i)
    y[i] = static_cast<T>(sums[i] / divisor);
}

KernelStatus CpuBackend::reduceSum(metart_dtype dtype,
                                   const StridedSpace<2> &space,
                                   int64_t resultCount, double divisor,
                                   const void *x, void *y) {
  size_t bytes = static_cast<size_t>(resultCount) * sizeof(double);
  auto *sums = static_cast<double *>(workspace.get(bytes));
  if (!sums)
    return workspaceExhausted(bytes);
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    reduceSumOf(space, resultCount, divisor, static_cast<const T *>(x), sums,
                static_cast<T *>(y));
  });
  return KernelStatus::ok();
}

} // namespace metart::cpu
