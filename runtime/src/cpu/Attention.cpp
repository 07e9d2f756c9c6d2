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
// diagonal tile. Query blocks run in parallel. On a ring (ring attention)
// the running state persists while the key blocks travel; a causal ring
// runs in the zigzag layout (Zigzag.h).
//
//===----------------------------------------------------------------------===//

#include "AttentionTiles.h"
#include "CpuBackend.h"
#include "Dtype.h"
#include "Gemm.h"
#include "Parallel.h"
#include "Travellers.h"
#include "Zigzag.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace metart::cpu {

namespace {

/// Adds one key block to the running state of every query: the maximum
/// `largest`, the sum `total` of exp(score - largest) and the weighted sum
/// of values `acc` (the output before its division by `total`).
template <typename T>
void accumulate(const AttentionSizes &s, const T *q, const T *k, const T *v,
                T *largestAll, T *totalAll, T *accAll) {
  int64_t blocks = (s.length + kQueryBlock - 1) / kQueryBlock;
  parallelFor(s.batch * blocks, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> scores(kQueryBlock * kKeyTile);
    for (int64_t item = begin; item < end; ++item) {
      int64_t b = item / blocks, first = (item % blocks) * kQueryBlock;
      int64_t rows = std::min(kQueryBlock, s.length - first);
      const T *qb = q + (b * s.length + first) * s.width;
      const T *kb = k + b * s.keys * s.width;
      const T *vb = v + b * s.keys * s.values;
      T *acc = accAll + (b * s.length + first) * s.values;
      T *largest = largestAll + b * s.length + first;
      T *total = totalAll + b * s.length + first;
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
             MatrixRef<T>{vb + tile * s.values, s.values, false}, T(1), acc,
             s.values);
      }
    }
  });
}

/// The keys and values visited block by block around the ring (one block
/// without one), the output accumulated in `y` and divided at the end.
template <typename T>
KernelStatus attentionOf(const AttentionSizes &s, const T *q, const T *k,
                         const T *v, T *y, KeyRing &ring) {
  int64_t queries = s.batch * s.length;
  std::vector<T> largest(queries, -std::numeric_limits<T>::infinity());
  std::vector<T> total(queries, T(0));
  std::fill(y, y + queries * s.values, T(0));
  Travellers<T> keys(ring);
  size_t kAt = keys.read(k, s.batch * s.keys * s.width);
  size_t vAt = keys.read(v, s.batch * s.keys * s.values);
  if (KernelStatus status =
          forEachKeyBlock(ring, keys, s,
                          [&](const AttentionSizes &block) {
                            accumulate(block, q, keys[kAt], keys[vAt],
                                       largest.data(), total.data(), y);
                          });
      status.failed())
    return status;
  parallelFor(queries, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t e = 0; e < s.values; ++e)
        y[i * s.values + e] /= total[i];
  });
  return KernelStatus::ok();
}

} // namespace

KernelStatus CpuBackend::attention(metart_dtype dtype,
                                   const AttentionSizes &sizes, const void *q,
                                   const void *k, const void *v, void *y) {
  KeyRing alone;
  return ringAttention(dtype, sizes, q, k, v, y, alone);
}

KernelStatus CpuBackend::ringAttention(metart_dtype dtype,
                                       const AttentionSizes &sizes,
                                       const void *q, const void *k,
                                       const void *v, void *y, KeyRing &ring) {
  if (!fitsBlas(kQueryBlock, std::max(kKeyTile, sizes.values),
                std::max(sizes.width, kKeyTile)))
    return {METART_ERROR_UNSUPPORTED,
            "attention widths exceed BLAS's 32-bit sizes"};
  KernelStatus status;
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    auto c = [](const void *p) { return static_cast<const T *>(p); };
    if (!usesZigzag(sizes, ring)) {
      status = attentionOf(sizes, c(q), c(k), c(v), static_cast<T *>(y), ring);
      return;
    }
    status = inZigzagLayout<T>(
        ring, sizes.batch, sizes.length,
        {{c(q), nullptr, sizes.width},
         {c(k), nullptr, sizes.width},
         {c(v), nullptr, sizes.values}},
        {{c(y), nullptr, sizes.values}},
        [&](KeyRing &zigzag, const std::vector<const T *> &in,
            const std::vector<T *> &out) {
          return attentionOf(sizes, in[0], in[1], in[2], out[0], zigzag);
        });
  });
  return status;
}

} // namespace metart::cpu
