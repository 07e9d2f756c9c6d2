//===- AttentionBackward.cpp - fused attention's derivative on the CPU ----===//
//
// FlashAttention-2's backward, for the cotangents asked for (any of dq, dk,
// dv) in one pass. Per attention (the batch items run in parallel):
//  1. per query, the softmax's log-normaliser lse = m + log(l), by the
//     forward's online maximum m and sum l over tiles of keys (one GEMM per
//     tile), and, for dq or dk, D = rowsum(P dP) with dP = dy v^T (another
//     GEMM), summed online as l is: sum_j exp(s_j - m) dP_j, rescaled
//     when m grows, over l at the end;
//  2. per block of queries and tile of keys, the probabilities
//     P = exp(scale q k^T - lse) again (one GEMM), then
//       dv_tile += P^T dy_blk,
//       dS = scale P (dy_blk v_tile^T - D),   (one GEMM)
//       dq_blk += dS k_tile,  dk_tile += dS^T q_blk.
// D from P and dP rather than FlashAttention's rowsum(dy * y): no rounded
// output cancels in dP - D (bf16's error there was 5% where the attention
// is peaked), and y need not be kept for the backward. Memory: two blocks
// of 64 x 64 and two vectors per query, never S x T. The
// cotangents accumulate into their outputs, each owned by one batch item,
// so the items need no reduction among threads. Causal attention skips the
// tiles after a block's last query and masks the diagonal tile. On a ring
// (ring attention) each step visits every key block as it passes, and dk
// and dv travel with their block.
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

template <typename T> struct Cotangents { T *dq, *dk, *dv; };

/// Per query: the running maximum, sum of exp(s - maximum) and of those
/// times dP while the key blocks pass; then the log-normaliser (in
/// `largest`) and D (in `weighted`).
template <typename T> struct RowStatistics {
  std::vector<T> largest, total, weighted;
  explicit RowStatistics(int64_t n)
      : largest(n, -std::numeric_limits<T>::infinity()), total(n, T(0)),
        weighted(n, T(0)) {}
  void finish() {
    for (size_t i = 0; i < largest.size(); ++i) {
      largest[i] += std::log(total[i]);
      weighted[i] /= total[i];
    }
  }
};

/// Step 1 for one attention and one key block: adds the block to each
/// query's running statistics; with `v` given, to D's sum too.
template <typename T>
void statistics(const AttentionSizes &s, const T *q, const T *k, const T *v,
                const T *dy, std::vector<T> &scores, std::vector<T> &dp,
                T *largestAll, T *totalAll, T *weightedAll) {
  for (int64_t first = 0; first < s.length; first += kQueryBlock) {
    int64_t rows = std::min(kQueryBlock, s.length - first);
    int64_t keyEnd = cpu::keyEnd(s, first, rows);
    T *largest = largestAll + first, *total = totalAll + first;
    T *weighted = weightedAll + first;
    for (int64_t tile = 0; tile < keyEnd; tile += kKeyTile) {
      int64_t cols = std::min(kKeyTile, keyEnd - tile);
      gemm(rows, cols, s.width,
           MatrixRef<T>{q + first * s.width, s.width, false},
           MatrixRef<T>{k + tile * s.width, s.width, true}, T(0), scores.data(),
           kKeyTile);
      if (v)
        gemm(rows, cols, s.values,
             MatrixRef<T>{dy + first * s.values, s.values, false},
             MatrixRef<T>{v + tile * s.values, s.values, true}, T(0), dp.data(),
             kKeyTile);
      for (int64_t i = 0; i < rows; ++i) {
        const T *row = scores.data() + i * kKeyTile;
        int64_t seen = seenInTile(s, first, i, tile, cols);
        T tileMax = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < seen; ++j)
          tileMax = std::max(tileMax, T(s.scale) * row[j]);
        T next = std::max(largest[i], tileMax);
        if (next == -std::numeric_limits<T>::infinity())
          continue;
        T sum = 0, dot = 0;
        for (int64_t j = 0; j < seen; ++j) {
          T e = std::exp(T(s.scale) * row[j] - next);
          sum += e;
          if (v)
            dot += e * dp[i * kKeyTile + j];
        }
        T correction = std::exp(largest[i] - next);
        total[i] = total[i] * correction + sum;
        weighted[i] = weighted[i] * correction + dot;
        largest[i] = next;
      }
    }
  }
}

/// Step 2 for one attention and one key block: the cotangents' terms of
/// the block, added to `out`.
template <typename T>
void contract(const AttentionSizes &s, const T *qb, const T *kb, const T *vb,
              const T *dyb, const T *lse, const T *rowDots, std::vector<T> &p,
              std::vector<T> &ds, Cotangents<T> out) {
  bool scoresNeeded = out.dq || out.dk;
  for (int64_t first = 0; first < s.length; first += kQueryBlock) {
    int64_t rows = std::min(kQueryBlock, s.length - first);
    int64_t keyEnd = cpu::keyEnd(s, first, rows);
    const T *qBlock = qb + first * s.width;
    const T *dyBlock = dyb + first * s.values;
    for (int64_t tile = 0; tile < keyEnd; tile += kKeyTile) {
      int64_t cols = std::min(kKeyTile, keyEnd - tile);
      gemm(rows, cols, s.width, MatrixRef<T>{qBlock, s.width, false},
           MatrixRef<T>{kb + tile * s.width, s.width, true}, T(0), p.data(),
           kKeyTile);
      for (int64_t i = 0; i < rows; ++i) {
        T *row = p.data() + i * kKeyTile;
        int64_t seen = seenInTile(s, first, i, tile, cols);
        for (int64_t j = 0; j < seen; ++j)
          row[j] = std::exp(T(s.scale) * row[j] - lse[first + i]);
        std::fill(row + seen, row + cols, T(0));
      }
      if (out.dv)
        gemm(cols, s.values, rows, MatrixRef<T>{p.data(), kKeyTile, true},
             MatrixRef<T>{dyBlock, s.values, false}, T(1),
             out.dv + tile * s.values, s.values);
      if (!scoresNeeded)
        continue;
      gemm(rows, cols, s.values, MatrixRef<T>{dyBlock, s.values, false},
           MatrixRef<T>{vb + tile * s.values, s.values, true}, T(0), ds.data(),
           kKeyTile);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          T &d = ds[i * kKeyTile + j];
          d = T(s.scale) * p[i * kKeyTile + j] * (d - rowDots[first + i]);
        }
      if (out.dq)
        gemm(rows, s.width, cols, MatrixRef<T>{ds.data(), kKeyTile, false},
             MatrixRef<T>{kb + tile * s.width, s.width, false}, T(1),
             out.dq + first * s.width, s.width);
      if (out.dk)
        gemm(cols, s.width, rows, MatrixRef<T>{ds.data(), kKeyTile, true},
             MatrixRef<T>{qBlock, s.width, false}, T(1),
             out.dk + tile * s.width, s.width);
    }
  }
}

/// Both steps, each over every key block around the ring (one block
/// without one); dk and dv travel with their block and reach its rank at
/// the end. Batch items run in parallel within a block.
template <typename T>
KernelStatus attentionBackwardOf(const AttentionSizes &s, const T *q,
                                 const T *k, const T *v, const T *dy,
                                 Cotangents<T> out, KeyRing &ring) {
  bool scoresNeeded = out.dq || out.dk;
  int64_t qs = s.length * s.width, ks = s.keys * s.width,
          vs = s.keys * s.values, ys = s.length * s.values;
  RowStatistics<T> rows(s.batch * s.length);
  Travellers<T> keys(ring);
  size_t kAt = keys.read(k, s.batch * ks), vAt = keys.read(v, s.batch * vs);
  auto eachItem = [&](auto body) {
    parallelFor(s.batch, 1, [&](int64_t begin, int64_t end) {
      std::vector<T> p(kQueryBlock * kKeyTile), ds(kQueryBlock * kKeyTile);
      for (int64_t b = begin; b < end; ++b)
        body(b, p, ds);
    });
  };
  KernelStatus status =
      forEachKeyBlock(ring, keys, s, [&](const AttentionSizes &block) {
        eachItem([&](int64_t b, std::vector<T> &p, std::vector<T> &ds) {
          int64_t at = b * s.length;
          statistics(block, q + b * qs, keys[kAt] + b * ks,
                     scoresNeeded ? keys[vAt] + b * vs : nullptr, dy + b * ys,
                     p, ds, rows.largest.data() + at, rows.total.data() + at,
                     rows.weighted.data() + at);
        });
      });
  if (status.failed())
    return status;
  rows.finish();
  if (out.dq)
    std::fill(out.dq, out.dq + s.batch * qs, T(0));
  Travellers<T> second(ring);
  kAt = second.read(k, s.batch * ks);
  vAt = second.read(v, s.batch * vs);
  size_t dkAt = second.sum(out.dk, s.batch * ks);
  size_t dvAt = second.sum(out.dv, s.batch * vs);
  status = forEachKeyBlock(ring, second, s, [&](const AttentionSizes &block) {
    T *dk = second.sumAt(dkAt), *dv = second.sumAt(dvAt);
    eachItem([&](int64_t b, std::vector<T> &p, std::vector<T> &ds) {
      int64_t at = b * s.length;
      contract(block, q + b * qs, second[kAt] + b * ks, second[vAt] + b * vs,
               dy + b * ys, rows.largest.data() + at, rows.weighted.data() + at,
               p, ds,
               Cotangents<T>{out.dq ? out.dq + b * qs : nullptr,
                             dk ? dk + b * ks : nullptr,
                             dv ? dv + b * vs : nullptr});
    });
  });
  if (status.failed())
    return status;
  return second.deliver();
}

} // namespace

KernelStatus CpuBackend::attentionBackward(metart_dtype dtype,
                                           const AttentionSizes &sizes,
                                           const void *q, const void *k,
                                           const void *v, const void *dy,
                                           void *dq, void *dk, void *dv) {
  KeyRing alone;
  return ringAttentionBackward(dtype, sizes, q, k, v, dy, dq, dk, dv, alone);
}

KernelStatus CpuBackend::ringAttentionBackward(metart_dtype dtype,
                                               const AttentionSizes &sizes,
                                               const void *q, const void *k,
                                               const void *v, const void *dy,
                                               void *dq, void *dk, void *dv,
                                               KeyRing &ring) {
  int64_t widest = std::max({sizes.width, sizes.values, kKeyTile});
  if (!fitsBlas(kQueryBlock, widest, widest))
    return {METART_ERROR_UNSUPPORTED,
            "attention widths exceed BLAS's 32-bit sizes"};
  KernelStatus status;
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    auto c = [](const void *p) { return static_cast<const T *>(p); };
    auto w = [](void *p) { return static_cast<T *>(p); };
    if (!usesZigzag(sizes, ring)) {
      status = attentionBackwardOf(sizes, c(q), c(k), c(v), c(dy),
                                   Cotangents<T>{w(dq), w(dk), w(dv)}, ring);
      return;
    }
    status =
        inZigzagLayout<T>(ring, sizes.batch, sizes.length,
                          {{c(q), nullptr, sizes.width},
                           {c(k), nullptr, sizes.width},
                           {c(v), nullptr, sizes.values},
                           {c(dy), nullptr, sizes.values}},
                          {{c(dq), nullptr, sizes.width},
                           {c(dk), nullptr, sizes.width},
                           {c(dv), nullptr, sizes.values}},
                          [&](KeyRing &zigzag, const std::vector<const T *> &in,
                              const std::vector<T *> &out) {
                            return attentionBackwardOf(
                                sizes, in[0], in[1], in[2], in[3],
                                Cotangents<T>{out[0], out[1], out[2]}, zigzag);
                          });
  });
  return status;
}

} // namespace metart::cpu
