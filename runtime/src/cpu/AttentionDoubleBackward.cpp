//===- AttentionDoubleBackward.cpp - attention's second derivative --------===//
//
// The derivative of attention's backward (dq, dk, dv from q, k, v, dy) for
// the cotangents gq, gk, gv of its results. Per query i and key j, with P
// the probabilities, dP = dy v^T, D = rowsum(P dP), dS = P (dP - D):
//   dS-bar = scale (gq k^T + q gk^T)           (cotangent of dS)
//   D-bar  = -rowsum(P dS-bar)
//   P-bar  = dy gv^T + dS-bar (dP - D) + D-bar dP
//   S-bar  = P (P-bar - R),  R = rowsum(P P-bar)  (through the softmax)
//   dP-bar = P (dS-bar + D-bar)
// and the cotangents
//   q-bar  = scale (S-bar k + dS gk),   k-bar = scale (S-bar^T q + dS^T gq),
//   v-bar  = dP-bar^T dy,               dy-bar = P gv + dP-bar v.
// The row statistics (the log-normaliser, D, D-bar and R, where
// R = rowsum(P dy gv^T) + rowsum(P dS-bar dP) + 2 D D-bar) are sums over a
// query's keys: a first pass over tiles of keys sums them online with the
// softmax (rescaled when the running maximum grows), a second recomputes
// each tile's terms and contracts them by GEMMs. Memory: a few 64 x 64
// blocks and vectors per query; never S x T. Batch items run in parallel.
// On a ring (ring attention) both passes visit the key blocks as they
// pass, and k-bar and v-bar travel with their block.
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

template <typename T> struct Inputs { const T *q, *k, *v, *dy, *gq, *gk, *gv; };

template <typename T> struct Outputs { T *q, *k, *v, *dy; };

/// One batch item's operands and the tile buffers of one thread.
template <typename T> struct Tiles {
  const AttentionSizes &s;
  Inputs<T> in;
  std::vector<T> p, dp, dsBar, x;
  Tiles(const AttentionSizes &s, Inputs<T> in)
      : s(s), in(in), p(kQueryBlock * kKeyTile), dp(p.size()), dsBar(p.size()),
        x(p.size()) {}

  bool scoresGrad() const { return in.gq || in.gk; }

  /// The raw tile terms of queries [first, first + rows) and keys
  /// [tile, tile + cols): scores (not yet scaled), dP, dS-bar, dy gv^T.
  void compute(int64_t first, int64_t rows, int64_t tile, int64_t cols) {
    auto m = [&](const T *data, int64_t ld, bool t) {
      return MatrixRef<T>{data, ld, t};
    };
    const T *qb = in.q + first * s.width, *kt = in.k + tile * s.width;
    const T *dyb = in.dy + first * s.values;
    gemm(rows, cols, s.width, m(qb, s.width, false), m(kt, s.width, true), T(0),
         p.data(), kKeyTile);
    if (scoresGrad()) {
      gemm(rows, cols, s.values, m(dyb, s.values, false),
           m(in.v + tile * s.values, s.values, true), T(0), dp.data(),
           kKeyTile);
      T beta = 0;
      if (in.gq) {
        gemm(rows, cols, s.width, m(in.gq + first * s.width, s.width, false),
             m(kt, s.width, true), T(0), dsBar.data(), kKeyTile);
        beta = 1;
      }
      if (in.gk)
        gemm(rows, cols, s.width, m(qb, s.width, false),
             m(in.gk + tile * s.width, s.width, true), beta, dsBar.data(),
             kKeyTile);
    }
    if (in.gv)
      gemm(rows, cols, s.values, m(dyb, s.values, false),
           m(in.gv + tile * s.values, s.values, true), T(0), x.data(),
           kKeyTile);
  }
  T dP(int64_t at) const { return scoresGrad() ? dp[at] : T(0); }
  T dSBar(int64_t at) const {
    return scoresGrad() ? T(s.scale) * dsBar[at] : T(0);
  }
  T fromValue(int64_t at) const { return in.gv ? x[at] : T(0); }
};

/// Per query, while the key blocks pass: the running maximum and the sums
/// of e = exp(score - maximum) times 1, dP, dS-bar, dy gv^T and dS-bar dP.
/// Then lse, D, D-bar and R (the first pass's result).
template <typename T> struct RowStatistics {
  std::vector<T> largest, l, dSum, cSum, aSum, bSum;
  std::vector<T> lse, d, dBar, r;
  explicit RowStatistics(int64_t n)
      : largest(n, -std::numeric_limits<T>::infinity()), l(n), dSum(n), cSum(n),
        aSum(n), bSum(n), lse(n), d(n), dBar(n), r(n) {}
  void finish() {
    for (size_t at = 0; at < lse.size(); ++at) {
      lse[at] = largest[at] + std::log(l[at]);
      d[at] = dSum[at] / l[at];
      dBar[at] = -cSum[at] / l[at];
      r[at] = (aSum[at] + bSum[at]) / l[at] + 2 * d[at] * dBar[at];
    }
  }
};

/// Adds one key block to the running sums of one batch item's queries
/// (those from `row0` in `stats`).
template <typename T>
void sumRows(Tiles<T> &t, RowStatistics<T> &stats, int64_t row0) {
  const AttentionSizes &s = t.s;
  constexpr T kNone = -std::numeric_limits<T>::infinity();
  for (int64_t first = 0; first < s.length; first += kQueryBlock) {
    int64_t rows = std::min(kQueryBlock, s.length - first);
    int64_t keyEnd = cpu::keyEnd(s, first, rows);
    int64_t base = row0 + first;
    T *largest = stats.largest.data() + base, *l = stats.l.data() + base;
    T *dSum = stats.dSum.data() + base, *cSum = stats.cSum.data() + base;
    T *aSum = stats.aSum.data() + base, *bSum = stats.bSum.data() + base;
    for (int64_t tile = 0; tile < keyEnd; tile += kKeyTile) {
      int64_t cols = std::min(kKeyTile, keyEnd - tile);
      t.compute(first, rows, tile, cols);
      for (int64_t i = 0; i < rows; ++i) {
        int64_t seen = seenInTile(s, first, i, tile, cols);
        const T *row = t.p.data() + i * kKeyTile;
        T tileMax = kNone;
        for (int64_t j = 0; j < seen; ++j)
          tileMax = std::max(tileMax, T(s.scale) * row[j]);
        T next = std::max(largest[i], tileMax);
        if (next == kNone)
          continue;
        T sums[5] = {0, 0, 0, 0, 0};
        for (int64_t j = 0; j < seen; ++j) {
          int64_t at = i * kKeyTile + j;
          T e = std::exp(T(s.scale) * row[j] - next);
          T dp = t.dP(at), dsBar = t.dSBar(at);
          sums[0] += e;
          sums[1] += e * dp;
          sums[2] += e * dsBar;
          sums[3] += e * t.fromValue(at);
          sums[4] += e * dsBar * dp;
        }
        T c = std::exp(largest[i] - next);
        l[i] = l[i] * c + sums[0];
        dSum[i] = dSum[i] * c + sums[1];
        cSum[i] = cSum[i] * c + sums[2];
        aSum[i] = aSum[i] * c + sums[3];
        bSum[i] = bSum[i] * c + sums[4];
        largest[i] = next;
      }
    }
  }
}

/// The second pass for one batch item (queries from `row0` in `stats`) and
/// one key block: its terms added to `out`.
template <typename T>
void contract(Tiles<T> &t, const RowStatistics<T> &stats, int64_t row0,
              Outputs<T> out) {
  const AttentionSizes &s = t.s;
  const Inputs<T> &in = t.in;
  auto m = [](const T *data, int64_t ld, bool transposed) {
    return MatrixRef<T>{data, ld, transposed};
  };
  for (int64_t first = 0; first < s.length; first += kQueryBlock) {
    int64_t rows = std::min(kQueryBlock, s.length - first);
    int64_t keyEnd = cpu::keyEnd(s, first, rows);
    const T *qb = in.q + first * s.width, *dyb = in.dy + first * s.values;
    for (int64_t tile = 0; tile < keyEnd; tile += kKeyTile) {
      int64_t cols = std::min(kKeyTile, keyEnd - tile);
      t.compute(first, rows, tile, cols);
      // In place: p <- P, x <- scale S-bar, dsBar <- dP-bar,
      // dp <- scale dS.
      for (int64_t i = 0; i < rows; ++i) {
        int64_t seen = seenInTile(s, first, i, tile, cols),
                row = row0 + first + i;
        T d = stats.d[row], dBar = stats.dBar[row], r = stats.r[row];
        for (int64_t j = 0; j < cols; ++j) {
          int64_t at = i * kKeyTile + j;
          T p =
              j < seen ? std::exp(T(s.scale) * t.p[at] - stats.lse[row]) : T(0);
          T dp = t.dP(at), dsBar = t.dSBar(at);
          T pBar = t.fromValue(at) + dsBar * (dp - d) + dBar * dp;
          t.p[at] = p;
          t.x[at] = T(s.scale) * p * (pBar - r);
          t.dsBar[at] = p * (dsBar + dBar);
          t.dp[at] = T(s.scale) * p * (dp - d);
        }
      }
      const T *kt = in.k + tile * s.width, *vt = in.v + tile * s.values;
      if (out.q) {
        T *qBar = out.q + first * s.width;
        gemm(rows, s.width, cols, m(t.x.data(), kKeyTile, false),
             m(kt, s.width, false), T(1), qBar, s.width);
        if (in.gk)
          gemm(rows, s.width, cols, m(t.dp.data(), kKeyTile, false),
               m(in.gk + tile * s.width, s.width, false), T(1), qBar, s.width);
      }
      if (out.k) {
        T *kBar = out.k + tile * s.width;
        gemm(cols, s.width, rows, m(t.x.data(), kKeyTile, true),
             m(qb, s.width, false), T(1), kBar, s.width);
        if (in.gq)
          gemm(cols, s.width, rows, m(t.dp.data(), kKeyTile, true),
               m(in.gq + first * s.width, s.width, false), T(1), kBar, s.width);
      }
      if (out.v && t.scoresGrad())
        gemm(cols, s.values, rows, m(t.dsBar.data(), kKeyTile, true),
             m(dyb, s.values, false), T(1), out.v + tile * s.values, s.values);
      if (out.dy) {
        T *dyBar = out.dy + first * s.values;
        if (t.scoresGrad())
          gemm(rows, s.values, cols, m(t.dsBar.data(), kKeyTile, false),
               m(vt, s.values, false), T(1), dyBar, s.values);
        if (in.gv)
          gemm(rows, s.values, cols, m(t.p.data(), kKeyTile, false),
               m(in.gv + tile * s.values, s.values, false), T(1), dyBar,
               s.values);
      }
    }
  }
}

/// Both passes, each over every key block around the ring (one block
/// without one); k-bar and v-bar travel with their block and reach its
/// rank at the end. Batch items run in parallel within a block.
template <typename T>
KernelStatus doubleBackwardOf(const AttentionSizes &s, Inputs<T> in,
                              Outputs<T> out, KeyRing &ring) {
  int64_t qs = s.length * s.width, ks = s.keys * s.width,
          vs = s.keys * s.values, ys = s.length * s.values;
  RowStatistics<T> stats(s.batch * s.length);
  // The operands of batch item b with the key side of the current block.
  auto itemOf = [&](int64_t b, Inputs<T> keys) {
    auto at = [b](const T *data, int64_t size) {
      return data ? data + b * size : nullptr;
    };
    return Inputs<T>{at(in.q, qs),   at(keys.k, ks), at(keys.v, vs),
                     at(in.dy, ys),  at(in.gq, qs),  at(keys.gk, ks),
                     at(keys.gv, vs)};
  };
  auto visit = [&](Travellers<T> &keys, const size_t *kv, auto body) {
    return forEachKeyBlock(ring, keys, s, [&](const AttentionSizes &block) {
      Inputs<T> current{nullptr, keys[kv[0]], keys[kv[1]], nullptr,
                        nullptr, keys[kv[2]], keys[kv[3]]};
      parallelFor(s.batch, 1, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          Tiles<T> tiles(block, itemOf(b, current));
          body(b, tiles);
        }
      });
    });
  };
  auto readKeys = [&](Travellers<T> &keys, size_t *kv) {
    kv[0] = keys.read(in.k, s.batch * ks);
    kv[1] = keys.read(in.v, s.batch * vs);
    kv[2] = keys.read(in.gk, in.gk ? s.batch * ks : 0);
    kv[3] = keys.read(in.gv, in.gv ? s.batch * vs : 0);
  };
  size_t kv[4];
  Travellers<T> first(ring);
  readKeys(first, kv);
  if (KernelStatus status = visit(
          first, kv,
          [&](int64_t b, Tiles<T> &t) { sumRows(t, stats, b * s.length); });
      status.failed())
    return status;
  stats.finish();
  for (auto [data, size] : {std::pair{out.q, qs}, std::pair{out.dy, ys}})
    if (data)
      std::fill(data, data + s.batch * size, T(0));
  Travellers<T> second(ring);
  readKeys(second, kv);
  size_t kBarAt = second.sum(out.k, s.batch * ks);
  size_t vBarAt = second.sum(out.v, s.batch * vs);
  if (KernelStatus status = visit(
          second, kv,
          [&](int64_t b, Tiles<T> &t) {
            auto at = [b](T *data, int64_t size) {
              return data ? data + b * size : nullptr;
            };
            contract(t, stats, b * s.length,
                     Outputs<T>{at(out.q, qs), at(second.sumAt(kBarAt), ks),
                                at(second.sumAt(vBarAt), vs), at(out.dy, ys)});
          });
      status.failed())
    return status;
  return second.deliver();
}

} // namespace

KernelStatus CpuBackend::attentionDoubleBackward(
    metart_dtype dtype, const AttentionSizes &sizes,
    const AttentionOperands &in, const AttentionCotangents &out) {
  KeyRing alone;
  return ringAttentionDoubleBackward(dtype, sizes, in, out, alone);
}

KernelStatus CpuBackend::ringAttentionDoubleBackward(
    metart_dtype dtype, const AttentionSizes &sizes,
    const AttentionOperands &in, const AttentionCotangents &out,
    KeyRing &ring) {
  int64_t widest = std::max({sizes.width, sizes.values, kKeyTile});
  if (!fitsBlas(kQueryBlock, widest, widest))
    return {METART_ERROR_UNSUPPORTED,
            "attention widths exceed BLAS's 32-bit sizes"};
  KernelStatus status;
  withFloat(dtype, [&](auto zero) {
    using T = decltype(zero);
    auto c = [](const void *p) { return static_cast<const T *>(p); };
    auto w = [](void *p) { return static_cast<T *>(p); };
    if (!usesZigzag(sizes, ring)) {
      status = doubleBackwardOf(
          sizes,
          Inputs<T>{c(in.q), c(in.k), c(in.v), c(in.dy), c(in.gq), c(in.gk),
                    c(in.gv)},
          Outputs<T>{w(out.q), w(out.k), w(out.v), w(out.dy)}, ring);
      return;
    }
    int64_t width = sizes.width, values = sizes.values;
    status = inZigzagLayout<T>(
        ring, sizes.batch, sizes.length,
        {{c(in.q), nullptr, width},
         {c(in.k), nullptr, width},
         {c(in.v), nullptr, values},
         {c(in.dy), nullptr, values},
         {c(in.gq), nullptr, width},
         {c(in.gk), nullptr, width},
         {c(in.gv), nullptr, values}},
        {{c(out.q), nullptr, width},
         {c(out.k), nullptr, width},
         {c(out.v), nullptr, values},
         {c(out.dy), nullptr, values}},
        [&](KeyRing &zigzag, const std::vector<const T *> &operands,
            const std::vector<T *> &results) {
          const std::vector<const T *> &o = operands;
          return doubleBackwardOf(
              sizes, Inputs<T>{o[0], o[1], o[2], o[3], o[4], o[5], o[6]},
              Outputs<T>{results[0], results[1], results[2], results[3]},
              zigzag);
        });
  });
  return status;
}

} // namespace metart::cpu
