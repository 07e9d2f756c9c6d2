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
// tiles after a block's last query and masks the diagonal tile.
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

template <typename T> struct Cotangents { T *dq, *dk, *dv; };

/// Step 1 for one attention: lse per query and, with `dv` (v) and `dy`
/// given, D = rowsum(P dP).
template <typename T>
void statistics(const AttentionSizes &s, const T *q, const T *k, const T *v,
                const T *dy, std::vector<T> &scores, std::vector<T> &dp,
                std::vector<T> &lse, std::vector<T> &d) {
  for (int64_t first = 0; first < s.length; first += kQueryBlock) {
    int64_t rows = std::min(kQueryBlock, s.length - first);
    int64_t keyEnd = cpu::keyEnd(s, first, rows);
    T *largest = lse.data() + first;
    T *weighted = d.data() + first;
    std::vector<T> total(rows, T(0));
    std::fill(largest, largest + rows, -std::numeric_limits<T>::infinity());
    std::fill(weighted, weighted + rows, T(0));
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
    for (int64_t i = 0; i < rows; ++i) {
      largest[i] += std::log(total[i]);
      weighted[i] /= total[i];
    }
  }
}

template <typename T>
void attentionBackwardOf(const AttentionSizes &s, const T *q, const T *k,
                         const T *v, const T *dy, Cotangents<T> out) {
  bool scoresNeeded = out.dq || out.dk;
  parallelFor(s.batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> p(kQueryBlock * kKeyTile), ds(kQueryBlock * kKeyTile);
    std::vector<T> lse(s.length), rowDots(s.length);
    for (int64_t b = begin; b < end; ++b) {
      const T *qb = q + b * s.length * s.width;
      const T *kb = k + b * s.keys * s.width;
      const T *vb = v + b * s.keys * s.values;
      const T *dyb = dy + b * s.length * s.values;
      T *dq = out.dq ? out.dq + b * s.length * s.width : nullptr;
      T *dk = out.dk ? out.dk + b * s.keys * s.width : nullptr;
      T *dv = out.dv ? out.dv + b * s.keys * s.values : nullptr;
      if (dq)
        std::fill(dq, dq + s.length * s.width, T(0));
      if (dk)
        std::fill(dk, dk + s.keys * s.width, T(0));
      if (dv)
        std::fill(dv, dv + s.keys * s.values, T(0));
      statistics(s, qb, kb, scoresNeeded ? vb : nullptr, dyb, p, ds, lse,
                 rowDots);
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
          if (dv)
            gemm(cols, s.values, rows, MatrixRef<T>{p.data(), kKeyTile, true},
                 MatrixRef<T>{dyBlock, s.values, false}, T(1),
                 dv + tile * s.values, s.values);
          if (!scoresNeeded)
            continue;
          gemm(rows, cols, s.values, MatrixRef<T>{dyBlock, s.values, false},
               MatrixRef<T>{vb + tile * s.values, s.values, true}, T(0),
               ds.data(), kKeyTile);
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
              T &d = ds[i * kKeyTile + j];
              d = T(s.scale) * p[i * kKeyTile + j] * (d - rowDots[first + i]);
            }
          if (dq)
            gemm(rows, s.width, cols, MatrixRef<T>{ds.data(), kKeyTile, false},
                 MatrixRef<T>{kb + tile * s.width, s.width, false}, T(1),
                 dq + first * s.width, s.width);
          if (dk)
            gemm(cols, s.width, rows, MatrixRef<T>{ds.data(), kKeyTile, true},
                 MatrixRef<T>{qBlock, s.width, false}, T(1),
                 dk + tile * s.width, s.width);
        }
      }
    }
  });
}

} // namespace

KernelStatus CpuBackend::attentionBackward(metart_dtype dtype,
                                           const AttentionSizes &sizes,
                                           const void *q, const void *k,
                                           const void *v, const void *dy,
                                           void *dq, void *dk, void *dv) {
  int64_t widest = std::max({sizes.width, sizes.values, kKeyTile});
  if (!fitsBlas(kQueryBlock, widest, widest))
    return {METART_ERROR_UNSUPPORTED,
            "attention widths exceed BLAS's 32-bit sizes"};
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    attentionBackwardOf(
        sizes, static_cast<const T *>(q), static_cast<const T *>(k),
        static_cast<const T *>(v), static_cast<const T *>(dy),
        Cotangents<T>{static_cast<T *>(dq), static_cast<T *>(dk),
                      static_cast<T *>(dv)});
  });
  return KernelStatus::ok();
}

} // namespace metart::cpu
