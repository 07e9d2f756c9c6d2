//===- CompressionTest.cpp - top-k and PowerSGD all-reduces ---------------===//
//
// metart_all_reduce_compressed over the world: top-k with every entry
// sent is the exact sum; with one entry sent, error feedback delivers the
// rest over later calls (hand-computed sequence); PowerSGD recovers a sum
// of rank 1 at rank 1, and with error feedback its outputs average to the
// sum of a full-rank input; every rank gets the same bits; bytes are the
// compressed ones; misuse is an error.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <cmath>
#include <cstring>

using namespace metart::test;

namespace {

MeshContext worldContext() {
  return MeshContext(Mesh{metart_world_size(), 1, 1, 1, 1, 1});
}

TEST(Compression, TopKWithEverythingSentIsTheSum) {
  MeshContext c = worldContext();
  int64_t g = metart_world_size();
  HostTensor x({3, 5}, METART_F32), y({3, 5}, METART_F32);
  x.fillInput(metart_world_rank());
  ASSERT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1, METART_COMPRESS_TOPK,
                                         1.0, 0),
            METART_OK)
      << metart_context_last_error(c);
  for (int64_t i = 0; i < 15; ++i) {
    double expected = 0;
    for (int64_t r = 0; r < g; ++r)
      expected += inputValue(r, i);
    EXPECT_EQ(y.get(i), expected) << "element " << i;
  }
}

TEST(Compression, TopKErrorFeedbackSendsTheRestLater) {
  MeshContext c = worldContext();
  int64_t g = metart_world_size();
  // Every rank holds x = [4, 3, 2, 1] and sends one entry per call (1/4).
  // Residual + x, its largest entry sent:
  //   [4,3,2,1] -> 0; [4,6,4,2] -> 1; [8,3,6,3] -> 0; [4,6,8,4] -> 2.
  // In a group of one nothing is compressed: y = x.
  HostTensor x({4}, METART_F32), y({4}, METART_F32);
  for (int64_t i = 0; i < 4; ++i)
    x.set(i, 4 - i);
  const double sent[4][4] = {
      {4, 0, 0, 0}, {0, 6, 0, 0}, {8, 0, 0, 0}, {0, 0, 8, 0}};
  for (int call = 0; call < 4; ++call) {
    ASSERT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1,
                                           METART_COMPRESS_TOPK, 0.25, 7),
              METART_OK);
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(y.get(i), g > 1 ? g * sent[call][i] : 4.0 - i)
          << "call " << call << ", element " << i;
  }
  // Another site starts from no residual.
  ASSERT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1, METART_COMPRESS_TOPK,
                                         0.25, 8),
            METART_OK);
  EXPECT_EQ(y.get(0), g > 1 ? 4.0 * g : 4.0);
}

TEST(Compression, PowerSgdRecoversARankOneSum) {
  MeshContext c = worldContext();
  int64_t g = metart_world_size();
  // Rank r holds (r + 1) u v^T: the sum is rank 1, recovered at rank 1.
  const int64_t rows = 8, cols = 6;
  HostTensor x({rows, cols}, METART_F32), y({rows, cols}, METART_F32);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      x.set(i * cols + j,
            (metart_world_rank() + 1) * (i + 1.0) * (j % 3 - 1.5));
  ASSERT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1,
                                         METART_COMPRESS_POWERSGD, 1, 0),
            METART_OK)
      << metart_context_last_error(c);
  double factor = g * (g + 1) / 2.0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double expected = (g > 1 ? factor : 1.0) * (i + 1.0) * (j % 3 - 1.5);
      EXPECT_NEAR(y.get(i * cols + j), expected,
                  1e-4 * std::fabs(expected) + 1e-5)
          << i << ", " << j;
    }
}

TEST(Compression, PowerSgdErrorFeedbackAveragesToTheSum) {
  MeshContext c = worldContext();
  int64_t g = metart_world_size();
  // A full-rank input at rank 1: each call sends a rank-1 part of what is
  // owed; the residual stays bounded, so the mean of the outputs tends to
  // the sum.
  const int64_t rows = 6, cols = 5, calls = 400;
  HostTensor x({rows, cols}, METART_F32), y({rows, cols}, METART_F32);
  for (int64_t i = 0; i < rows * cols; ++i)
    x.set(i, std::sin(1.0 + i + 3.0 * metart_world_rank()));
  std::vector<double> mean(rows * cols, 0.0);
  for (int call = 0; call < calls; ++call) {
    ASSERT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1,
                                           METART_COMPRESS_POWERSGD, 1, 3),
              METART_OK);
    for (int64_t i = 0; i < rows * cols; ++i)
      mean[i] += y.get(i) / calls;
  }
  double error = 0, norm = 0;
  for (int64_t i = 0; i < rows * cols; ++i) {
    double expected = 0;
    for (int64_t r = 0; r < g; ++r)
      expected += std::sin(1.0 + i + 3.0 * r);
    error = std::max(error, std::fabs(mean[i] - expected));
    norm = std::max(norm, std::fabs(expected));
  }
  EXPECT_LT(error, 0.02 * norm);
}

TEST(Compression, SameBitsOnEveryRankAndCompressedBytes) {
  MeshContext c = worldContext();
  int64_t g = metart_world_size();
  const int64_t rows = 16, cols = 16;
  HostTensor x({rows, cols}, METART_F32), y({rows, cols}, METART_F32),
      gathered({g * rows, cols}, METART_F32);
  for (int64_t i = 0; i < rows * cols; ++i)
    x.set(i, std::cos(i * 0.37 + metart_world_rank()) / 3.0);
  for (int32_t method : {METART_COMPRESS_TOPK, METART_COMPRESS_POWERSGD}) {
    double parameter = method == METART_COMPRESS_TOPK ? 0.1 : 2;
    metart_comm_stats before, after;
    metart_comm_stats_get(c, 1, &before);
    ASSERT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1, method, parameter,
                                           20 + method),
              METART_OK);
    metart_comm_stats_get(c, 1, &after);
    // top-k: 26 pairs of 8 bytes; PowerSGD: (16 + 16) x 2 floats.
    int64_t bytes = method == METART_COMPRESS_TOPK ? 26 * 8 : 32 * 2 * 4;
    EXPECT_EQ(after.bytes - before.bytes, g > 1 ? bytes : 0);
    ASSERT_EQ(metart_all_gather(c, &y.t, &gathered.t, 1, 0), METART_OK);
    for (int64_t r = 1; r < g; ++r)
      EXPECT_EQ(0, std::memcmp(gathered.bytes.data(),
                               gathered.bytes.data() + r * rows * cols * 4,
                               rows * cols * 4))
          << "method " << method << ": rank " << r << " differs";
  }
}

TEST(Compression, AsynchronousEqualsBlocking) {
  MeshContext c = worldContext();
  HostTensor x({12, 10}, METART_F32), a({12, 10}, METART_F32),
      b({12, 10}, METART_F32);
  x.fillInput(metart_world_rank());
  // Two sites fed the same inputs: the same residuals, the same outputs.
  for (int call = 0; call < 3; ++call) {
    ASSERT_EQ(metart_all_reduce_compressed_start(
                  c, &x.t, &a.t, 1, METART_COMPRESS_POWERSGD, 2, 40),
              METART_OK);
    ASSERT_EQ(metart_collective_wait(c, &a.t), METART_OK);
    ASSERT_EQ(metart_all_reduce_compressed(c, &x.t, &b.t, 1,
                                           METART_COMPRESS_POWERSGD, 2, 41),
              METART_OK);
    EXPECT_EQ(0, std::memcmp(a.bytes.data(), b.bytes.data(), a.bytes.size()))
        << "call " << call;
  }
}

TEST(Compression, MisuseIsAnError) {
  MeshContext c = worldContext();
  HostTensor x({4}, METART_F32), y({4}, METART_F32), d({4}, METART_F64);
  EXPECT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1, METART_COMPRESS_TOPK,
                                         0, 0),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1, METART_COMPRESS_TOPK,
                                         1.5, 0),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1,
                                         METART_COMPRESS_POWERSGD, 1.5, 0),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(metart_all_reduce_compressed(c, &x.t, &y.t, 1, 9, 1, 0),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(metart_all_reduce_compressed(c, &d.t, &d.t, 1, METART_COMPRESS_TOPK,
                                         0.5, 0),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(c)).find("f32"),
            std::string::npos);
}

} // namespace

namespace {

TEST(StaleAllReduce, ReturnsTheSumStartedStalenessCallsAgo) {
  MeshContext c = worldContext();
  int64_t g = metart_world_size();
  const int64_t lag = 2;
  HostTensor x({3}, METART_F64), y({3}, METART_F64);
  for (int call = 0; call < 6; ++call) {
    for (int64_t i = 0; i < 3; ++i)
      x.set(i, 10.0 * call + i + metart_world_rank());
    ASSERT_EQ(metart_all_reduce_stale(c, &x.t, &y.t, 1, lag, 5), METART_OK)
        << metart_context_last_error(c);
    for (int64_t i = 0; i < 3; ++i) {
      // A group of one has nothing to wait for: the plain sum, now.
      int source = g > 1 ? call - lag : call;
      double expected = 0;
      if (source >= 0)
        for (int64_t r = 0; r < g; ++r)
          expected += 10.0 * source + i + r;
      EXPECT_EQ(y.get(i), expected) << "call " << call << ", element " << i;
    }
  }
  EXPECT_EQ(metart_has_stale_collectives(c), g > 1 ? 1 : 0);
  // Staleness 0 is the plain sum.
  HostTensor z({3}, METART_F64);
  ASSERT_EQ(metart_all_reduce_stale(c, &x.t, &z.t, 1, 0, 6), METART_OK);
  EXPECT_EQ(z.get(0), g * 50.0 + g * (g - 1) / 2.0);
}

TEST(StaleAllReduce, MisuseIsAnError) {
  MeshContext c = worldContext();
  HostTensor x({3}, METART_F32), y({3}, METART_F32), longer({4}, METART_F32);
  EXPECT_EQ(metart_all_reduce_stale(c, &x.t, &y.t, 1, -1, 0),
            METART_ERROR_INVALID_ARGUMENT);
  if (metart_world_size() == 1)
    return;
  ASSERT_EQ(metart_all_reduce_stale(c, &x.t, &y.t, 1, 1, 9), METART_OK);
  EXPECT_EQ(metart_all_reduce_stale(c, &longer.t, &longer.t, 1, 1, 9),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(c)).find("another size"),
            std::string::npos);
}

} // namespace
