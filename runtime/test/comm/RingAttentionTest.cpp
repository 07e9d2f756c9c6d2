//===- RingAttentionTest.cpp - ring attention against whole attention -----===//
//
// Every rank draws the same whole sequences, runs the ring kernels on its
// block of positions over a group of the mesh, and checks its block of each
// result against the plain kernels on the whole sequences, which it runs by
// itself. Blocks of 70 positions: a full tile of 64 keys and a partial one,
// so the tiles within a block and the blocks around the ring both count.
// Causal rings run in both layouts: zigzag (the default, each rank holding
// a chunk from each end) and contiguous (METART_RING_LAYOUT).
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <algorithm>
#include <cmath>
#include <random>

using namespace metart::test;

namespace {

constexpr int64_t kBatch = 2, kBlock = 70, kWidth = 8, kValues = 6;

/// Whole-sequence tensors [batch, positions, features] and the blocks of
/// them one rank holds.
struct Sequences {
  int64_t ranks, position;
  explicit Sequences(int64_t ranks, int64_t position)
      : ranks(ranks), position(position) {}

  HostTensor whole(int64_t features, unsigned seed) const {
    HostTensor t({kBatch, ranks * kBlock, features}, METART_F64);
    std::mt19937_64 draw(seed);
    std::uniform_real_distribution<double> value(-1.5, 1.5);
    for (int64_t i = 0; i < t.size(); ++i)
      t.set(i, value(draw));
    return t;
  }
  HostTensor zerosLike(const HostTensor &t) const {
    return HostTensor(t.shape, METART_F64);
  }
  HostTensor blockOf(const HostTensor &w) const {
    int64_t features = w.shape[2];
    HostTensor b({kBatch, kBlock, features}, METART_F64);
    for (int64_t n = 0; n < kBatch; ++n)
      for (int64_t i = 0; i < kBlock; ++i)
        for (int64_t f = 0; f < features; ++f)
          b.set((n * kBlock + i) * features + f,
                w.get(((n * ranks + position) * kBlock + i) * features + f));
    return b;
  }
  HostTensor blockShaped(int64_t features) const {
    return HostTensor({kBatch, kBlock, features}, METART_F64);
  }
};

/// The largest difference between `block` and this rank's block of
/// `whole`, relative to the whole's largest magnitude.
double relativeError(const Sequences &s, const HostTensor &block,
                     const HostTensor &whole) {
  HostTensor expected = s.blockOf(whole);
  double worst = 0, scale = 1e-300;
  for (int64_t i = 0; i < whole.size(); ++i)
    scale = std::max(scale, std::abs(whole.get(i)));
  for (int64_t i = 0; i < block.size(); ++i)
    worst = std::max(worst, std::abs(block.get(i) - expected.get(i)));
  return worst / scale;
}

/// Sets METART_RING_LAYOUT (causal rings: zigzag, the default, or
/// contiguous) while in scope.
struct ScopedLayout {
  explicit ScopedLayout(const char *layout) {
    ::setenv("METART_RING_LAYOUT", layout, 1);
  }
  ~ScopedLayout() { ::unsetenv("METART_RING_LAYOUT"); }
};

std::string where(const Mesh &mesh, int mask, bool causal) {
  return meshName(mesh) + ", mask " + metart_comm_axes_name(mask) +
         (causal ? ", causal" : "") + ", rank " +
         std::to_string(metart_world_rank());
}

TEST(RingAttention, EachKernelEqualsWholeAttentionOnItsBlock) {
  constexpr double kTolerance = 1e-12;
  for (const Mesh &mesh : meshesOfWorld())
    for (int mask : {1 << 5, (1 << METART_NUM_AXES) - 1}) {
      MeshContext c(mesh);
      std::vector<int64_t> group = groupOf(mesh, mask);
      int64_t position =
          std::find(group.begin(), group.end(), metart_world_rank()) -
          group.begin();
      Sequences s(int64_t(group.size()), position);
      // Plain attention, then causal in both layouts of the ring.
      for (const char *layout : {"", "zigzag", "contiguous"}) {
        bool causal = *layout != 0;
        ScopedLayout chosen(layout);
        std::string at = where(mesh, mask, causal) + " " + layout;
        double scale = 1 / std::sqrt(double(kWidth));
        HostTensor q = s.whole(kWidth, 1), k = s.whole(kWidth, 2),
                   v = s.whole(kValues, 3), dy = s.whole(kValues, 4),
                   gq = s.whole(kWidth, 5), gk = s.whole(kWidth, 6),
                   gv = s.whole(kValues, 7);
        HostTensor qb = s.blockOf(q), kb = s.blockOf(k), vb = s.blockOf(v),
                   dyb = s.blockOf(dy), gqb = s.blockOf(gq),
                   gkb = s.blockOf(gk), gvb = s.blockOf(gv);

        HostTensor y = s.zerosLike(dy), yb = s.blockShaped(kValues);
        ASSERT_EQ(metart_nn_attention(c, &q.t, &k.t, &v.t, scale, causal, &y.t),
                  METART_OK);
        ASSERT_EQ(metart_nn_ring_attention(c, &qb.t, &kb.t, &vb.t, scale,
                                           causal, mask, &yb.t),
                  METART_OK)
            << metart_context_last_error(c);
        EXPECT_LT(relativeError(s, yb, y), kTolerance) << "y, " << at;

        HostTensor dq = s.zerosLike(q), dk = s.zerosLike(k),
                   dv = s.zerosLike(v);
        HostTensor dqb = s.blockShaped(kWidth), dkb = s.blockShaped(kWidth),
                   dvb = s.blockShaped(kValues);
        ASSERT_EQ(metart_nn_attention_backward(c, &q.t, &k.t, &v.t, &dy.t,
                                               scale, causal, &dq.t, &dk.t,
                                               &dv.t),
                  METART_OK);
        ASSERT_EQ(metart_nn_ring_attention_backward(c, &qb.t, &kb.t, &vb.t,
                                                    &dyb.t, scale, causal, mask,
                                                    &dqb.t, &dkb.t, &dvb.t),
                  METART_OK)
            << metart_context_last_error(c);
        EXPECT_LT(relativeError(s, dqb, dq), kTolerance) << "dq, " << at;
        EXPECT_LT(relativeError(s, dkb, dk), kTolerance) << "dk, " << at;
        EXPECT_LT(relativeError(s, dvb, dv), kTolerance) << "dv, " << at;

        // Only dv: the probabilities without D.
        HostTensor dvOnly = s.blockShaped(kValues);
        ASSERT_EQ(metart_nn_ring_attention_backward(
                      c, &qb.t, &kb.t, &vb.t, &dyb.t, scale, causal, mask,
                      nullptr, nullptr, &dvOnly.t),
                  METART_OK);
        EXPECT_LT(relativeError(s, dvOnly, dv), kTolerance) << "dv, " << at;

        HostTensor qBar = s.zerosLike(q), kBar = s.zerosLike(k),
                   vBar = s.zerosLike(v), dyBar = s.zerosLike(dy);
        HostTensor qBarB = s.blockShaped(kWidth), kBarB = s.blockShaped(kWidth),
                   vBarB = s.blockShaped(kValues),
                   dyBarB = s.blockShaped(kValues);
        ASSERT_EQ(metart_nn_attention_double_backward(
                      c, &q.t, &k.t, &v.t, &dy.t, &gq.t, &gk.t, &gv.t, scale,
                      causal, &qBar.t, &kBar.t, &vBar.t, &dyBar.t),
                  METART_OK);
        ASSERT_EQ(metart_nn_ring_attention_double_backward(
                      c, &qb.t, &kb.t, &vb.t, &dyb.t, &gqb.t, &gkb.t, &gvb.t,
                      scale, causal, mask, &qBarB.t, &kBarB.t, &vBarB.t,
                      &dyBarB.t),
                  METART_OK)
            << metart_context_last_error(c);
        EXPECT_LT(relativeError(s, qBarB, qBar), kTolerance) << "q_bar, " << at;
        EXPECT_LT(relativeError(s, kBarB, kBar), kTolerance) << "k_bar, " << at;
        EXPECT_LT(relativeError(s, vBarB, vBar), kTolerance) << "v_bar, " << at;
        EXPECT_LT(relativeError(s, dyBarB, dyBar), kTolerance)
            << "dy_bar, " << at;

        // One cotangent of the backward's results, gk alone: the key side
        // that travels may be partly absent.
        HostTensor qBarK = s.zerosLike(q), qBarKB = s.blockShaped(kWidth);
        ASSERT_EQ(metart_nn_attention_double_backward(
                      c, &q.t, &k.t, &v.t, &dy.t, nullptr, &gk.t, nullptr,
                      scale, causal, &qBarK.t, nullptr, nullptr, nullptr),
                  METART_OK);
        ASSERT_EQ(metart_nn_ring_attention_double_backward(
                      c, &qb.t, &kb.t, &vb.t, &dyb.t, nullptr, &gkb.t, nullptr,
                      scale, causal, mask, &qBarKB.t, nullptr, nullptr,
                      nullptr),
                  METART_OK)
            << metart_context_last_error(c);
        EXPECT_LT(relativeError(s, qBarKB, qBarK), kTolerance)
            << "q_bar from gk, " << at;
      }
    }
}

TEST(RingAttention, ExchangesCountAsCollectivesOfTheMask) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    int mask = 1 << 5;
    std::vector<int64_t> group = groupOf(mesh, mask);
    int64_t ranks = int64_t(group.size());
    Sequences s(ranks,
                std::find(group.begin(), group.end(), metart_world_rank()) -
                    group.begin());
    HostTensor q = s.blockShaped(kWidth), k = s.blockShaped(kWidth),
               v = s.blockShaped(kValues), y = s.blockShaped(kValues);
    metart_comm_stats_reset(c);
    ASSERT_EQ(metart_nn_ring_attention(c, &q.t, &k.t, &v.t, 1.0, 0, mask, &y.t),
              METART_OK);
    metart_comm_stats stats;
    ASSERT_EQ(metart_comm_stats_get(c, mask, &stats), METART_OK);
    // Keys and values, ranks - 1 times.
    int64_t blockBytes = kBatch * kBlock * (kWidth + kValues) * 8;
    EXPECT_EQ(stats.calls, ranks > 1 ? 2 * (ranks - 1) : 0) << meshName(mesh);
    EXPECT_EQ(stats.bytes, (ranks - 1) * blockBytes) << meshName(mesh);

    // Causal: the zigzag layout also moves the chunks of q, k, v (in) and
    // y (out) that change rank, one transfer each way per chunk. Chunk c
    // is in block c / 2 and on zigzag rank c (c < S) or 2S - 1 - c.
    int64_t moved = 0, rank = s.position;
    for (int64_t chunk = 0; chunk < 2 * ranks; ++chunk) {
      int64_t zigzagRank = chunk < ranks ? chunk : 2 * ranks - 1 - chunk;
      if (chunk / 2 != zigzagRank && (chunk / 2 == rank || zigzagRank == rank))
        ++moved;
    }
    int64_t chunkBytes = kBatch * (kBlock / 2) * 8;
    metart_comm_stats_reset(c);
    ASSERT_EQ(metart_nn_ring_attention(c, &q.t, &k.t, &v.t, 1.0, 1, mask, &y.t),
              METART_OK);
    ASSERT_EQ(metart_comm_stats_get(c, mask, &stats), METART_OK);
    EXPECT_EQ(stats.calls, ranks > 1 ? 2 * (ranks - 1) + 4 * moved : 0)
        << meshName(mesh);
    EXPECT_EQ(stats.bytes, (ranks - 1) * blockBytes +
                               moved * chunkBytes * 2 * (kWidth + kValues))
        << meshName(mesh);
  }
}

TEST(RingAttention, RefusesAMaskOutsideTheMesh) {
  Context c;
  HostTensor q({1, 4, 2}, METART_F64), y({1, 4, 2}, METART_F64);
  EXPECT_EQ(metart_nn_ring_attention(c, &q.t, &q.t, &q.t, 1.0, 0, 64, &y.t),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_context_last_error(c),
               "metart_nn_ring_attention: axes mask 64 is not in [0, 63]");
}

} // namespace
