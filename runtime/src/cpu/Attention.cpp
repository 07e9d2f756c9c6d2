//===- Attention.cpp - fused attention on the CPU -------------------------===//
//
// FlashAttention's forward: for a block of queries, the keys are visited in
// tiles; each tile's scores come from one GEMM (q_blk k_tile^T), and an
// online softmax keeps per query the running maximum m and sum l of
// exp(score - m), rescaling the accumulated output when m grows:
//   m' = max(m, max_j s_j),  c = exp(m - m'),  l' = c l + sum_j exp(s_j - m'),
//   acc' = c acc + exp(s - m') v_tile   (another GEMM),
// and y = acc / l at the end. Memory: a block of scores, never S x T. Causal
// attention skips the tiles wholly after a query block and masks inside the
// diagonal tile. Query blocks run in parallel.
//
//===----------------------------------------------------------------------===//

#include "AttentionTiles.h"
#include "CpuBackend.h"
#include "Dtype.h"
#include "Gemm.h"
#include "Parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace metart::cpu {

namespace {

template <typename T>
void attentionOf(const AttentionSizes &s, const T *q, const T *k, const T *v,
                 T *y) {
  int64_t blocks = (s.length + kQueryBlock - 1) / kQueryBlock;
  parallelFor(s.batch * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> scores(kQueryBlock * kKeyTile);
    std::vector<T> acc(kQueryBlock * s.values);
    std::vector<T> largest(kQueryBlock), total(kQueryBlock);
    for (int64_t item = begin; item < end; ++item) {
      int64_t b = item / blocks, first = (item % blocks) * kQueryBlock;
      int64_t rows = std::min(kQueryBlock, s.length - first);
      const T *qb = q + (b * s.length + first) * s.width;
      const T *kb = k + b * s.keys * s.width;
      const T *vb = v + b * s.keys * s.values;
      std::fill(acc.begin(), acc.begin() + rows * s.values, T(0));
      std::fill(largest.begin(), largest.end(),
                -std::numeric_limits<T>::infinity());
      std::fill(total.begin(), total.end(), T(0));
      // Causal: the last key any query of the block sees.
      int64_t keyEnd = cpu::keyEnd(s, first, rows);
      for (int64_t tile = 0; tile < keyEnd; tile += kKeyTile) {
        int64_t cols = std::min(kKeyTile, keyEnd - tile);
        // scores[rows, cols] = q_blk k_tile^T (leading dimension kKeyTile).
        gemm(rows, cols, s.width, MatrixRef<T>{qb, s.width, false},
             MatrixRef<T>{kb + tile * s.width, s.width, true}, T(0),
             scores.data(), kKeyTile);
        for (int64_t i = 0; i < rows; ++i) {
          T *row = scores.data() + i * kKeyTile;
          int64_t seen = seenInTile(s, first, i, tile, cols);
          T tileMax = -std::numeric_limits<T>::infinity();
          for (int64_t j = 0; j < seen; ++j) {
            row[j] *= T(s.scale);
            tileMax = std::max(tileMax, row[j]);
          }
          T next = std::max(largest[i], tileMax);
          // Before any key (next = -inf) nothing accumulates.
          T correction =
              largest[i] == next ? T(1) : std::exp(largest[i] - next);
          T sum = 0;
          for (int64_t j = 0; j < seen; ++j) {
            row[j] = std::exp(row[j] - next);
            sum += row[j];
          }
          for (int64_t j = seen; j < cols; ++j)
            row[j] = 0;
          total[i] = total[i] * correction + sum;
          largest[i] = next;
          if (correction != T(1))
            for (int64_t e = 0; e < s.values; ++e)
              acc[i * s.values + e] *= correction;
        }
        // acc += p_tile v_tile.
        gemm(rows, s.values, cols, MatrixRef<T>{scores.data(), kKeyTile, false},
             MatrixRef<T>{vb + tile * s.values, s.values, false}, T(1),
             acc.data(), s.values);
      }
      T *yb = y + (b * s.length + first) * s.values;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t e = 0; e < s.values; ++e)
          yb[i * s.values + e] = acc[i * s.values + e] / total[i];
    }
  });
}

} // namespace

KernelStatus CpuBackend::attention(metart_dtype dtype,
                                   const AttentionSizes &sizes, const void *q,
                                   const void *k, const void *v, void *y) {
  if (!fitsBlas(kQueryBlock, std::max(kKeyTile, sizes.values),
                std::max(sizes.width, kKeyTile)))
    return {METART_ERROR_UNSUPPORTED,
            "attention widths exceed BLAS's 32-bit sizes"};
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    attentionOf(sizes, static_cast<const T *>(q), static_cast<const T *>(k),
                static_cast<const T *>(v), static_cast<T *>(y));
  });
  return KernelStatus::ok();
}

} // namespace metart::cpu
