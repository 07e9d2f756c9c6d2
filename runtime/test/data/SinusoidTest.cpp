//===- SinusoidTest.cpp - the sinusoid task distribution ------------------===//
//
// Exact reproducibility (the same arguments give the same bytes, a draw is
// the concatenation of its slices, splits, iterations and seeds differ, the
// f32 draw is the f64 draw rounded, the support size leaves the query
// alone) and the statistics of the draws: every task is y = A sin(x - phase)
// with support and query from the same A and phase, A, phase and x uniform
// in their ranges.
//
//===----------------------------------------------------------------------===//

#include "CApi.h"
#include "TaskDraw.h"

#include "metart/data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using metart::test::drawTasks;
using metart::test::TaskDraw;

namespace {

/// The MAML paper's ranges.
metart_sinusoid_config mamlConfig(int32_t dtype = METART_F64,
                                  int64_t support = 10, int64_t query = 10) {
  return {{0.1, 5.0}, {0.0, M_PI}, {-5.0, 5.0}, support, query, dtype};
}

/// A handle that destroys itself.
struct Tasks {
  explicit Tasks(const metart_sinusoid_config &config, uint64_t seed = 1234) {
    EXPECT_EQ(metart_tasks_create_sinusoid(&config, seed, &tasks), METART_OK)
        << metart_tasks_last_error(nullptr);
  }
  ~Tasks() { metart_tasks_destroy(tasks); }
  Tasks(const Tasks &) = delete;
  Tasks &operator=(const Tasks &) = delete;

  metart_tasks *tasks = nullptr;
};

TEST(Sinusoid, DescribesItsSamples) {
  Tasks t(mamlConfig(METART_F32, 5, 7));
  int64_t support = 0, query = 0;
  metart_tasks_sizes(t.tasks, &support, &query);
  EXPECT_EQ(support, 5);
  EXPECT_EQ(query, 7);
  for (int which : {0, 1}) {
    int32_t dtype = -1, rank = -1;
    const int64_t *shape = nullptr;
    ASSERT_EQ(metart_tasks_sample_type(t.tasks, which, &dtype, &rank, &shape),
              METART_OK);
    EXPECT_EQ(dtype, METART_F32);
    ASSERT_EQ(rank, 1);
    EXPECT_EQ(shape[0], 1);
  }
}

TEST(Sinusoid, SameArgumentsGiveTheSameBytes) {
  Tasks a(mamlConfig()), b(mamlConfig());
  auto first = drawTasks<double>(a.tasks, METART_SPLIT_TRAIN, 17, 3, 8);
  EXPECT_TRUE(first ==
              drawTasks<double>(a.tasks, METART_SPLIT_TRAIN, 17, 3, 8));
  EXPECT_TRUE(first == drawTasks<double>(b.tasks, METART_SPLIT_TRAIN, 17, 3, 8))
      << "a new handle with the same seed draws the same tasks";
}

TEST(Sinusoid, ADrawIsTheConcatenationOfItsSlices) {
  Tasks t(mamlConfig());
  for (metart_split split : {METART_SPLIT_TRAIN, METART_SPLIT_EVAL}) {
    auto whole = drawTasks<double>(t.tasks, split, 4, 0, 25);
    auto parts = drawTasks<double>(t.tasks, split, 4, 0, 10) +
                 drawTasks<double>(t.tasks, split, 4, 10, 15);
    EXPECT_TRUE(whole == parts);
    EXPECT_TRUE(whole.slice(7, 1) ==
                drawTasks<double>(t.tasks, split, 4, 7, 1));
    // Five ranks drawing five tasks each.
    TaskDraw<double> ranks;
    for (int64_t rank = 0; rank < 5; ++rank)
      ranks = ranks + drawTasks<double>(t.tasks, split, 4, 5 * rank, 5);
    EXPECT_TRUE(whole == ranks);
  }
}

TEST(Sinusoid, SplitsIterationsSeedsAndIndicesDiffer) {
  Tasks t(mamlConfig()), other(mamlConfig(), 1235);
  auto base = drawTasks<double>(t.tasks, METART_SPLIT_TRAIN, 0, 0, 2);
  EXPECT_NE(base.supportX,
            drawTasks<double>(t.tasks, METART_SPLIT_EVAL, 0, 0, 2).supportX);
  EXPECT_NE(base.supportX,
            drawTasks<double>(t.tasks, METART_SPLIT_TRAIN, 1, 0, 2).supportX);
  EXPECT_NE(
      base.supportX,
      drawTasks<double>(other.tasks, METART_SPLIT_TRAIN, 0, 0, 2).supportX);
  EXPECT_NE(base.slice(0, 1).supportX, base.slice(1, 1).supportX);
  EXPECT_NE(base.supportX, base.queryX)
      << "support and query are drawn independently";
}

TEST(Sinusoid, F32IsTheF64DrawRounded) {
  Tasks f32(mamlConfig(METART_F32)), f64(mamlConfig(METART_F64));
  auto single = drawTasks<float>(f32.tasks, METART_SPLIT_EVAL, 3, 0, 20);
  auto wide = drawTasks<double>(f64.tasks, METART_SPLIT_EVAL, 3, 0, 20);
  auto rounded = [](const std::vector<double> &v) {
    return std::vector<float>(v.begin(), v.end());
  };
  EXPECT_EQ(single.supportX, rounded(wide.supportX));
  EXPECT_EQ(single.supportY, rounded(wide.supportY));
  EXPECT_EQ(single.queryX, rounded(wide.queryX));
  EXPECT_EQ(single.queryY, rounded(wide.queryY));
}

TEST(Sinusoid, SetSizesDoNotChangeOtherSamples) {
  Tasks small(mamlConfig(METART_F64, 5, 10)),
      large(mamlConfig(METART_F64, 20, 10));
  auto a = drawTasks<double>(small.tasks, METART_SPLIT_TRAIN, 2, 0, 1);
  auto b = drawTasks<double>(large.tasks, METART_SPLIT_TRAIN, 2, 0, 1);
  EXPECT_EQ(a.queryX, b.queryX);
  EXPECT_EQ(a.queryY, b.queryY);
  EXPECT_EQ(a.supportX,
            std::vector<double>(b.supportX.begin(), b.supportX.begin() + 5));
}

/// The amplitude and phase of y = A sin(x - phase) = a sin x + b cos x
/// (a = A cos phase, b = -A sin phase) fitted to samples by least squares,
/// and the largest residual.
struct Fit {
  double amplitude, phase, residual;
};

Fit fitSinusoid(const double *x, const double *y, int64_t n) {
  double ss = 0, sc = 0, cc = 0, sy = 0, cy = 0;
  for (int64_t i = 0; i < n; ++i) {
    double s = std::sin(x[i]), c = std::cos(x[i]);
    ss += s * s, sc += s * c, cc += c * c, sy += s * y[i], cy += c * y[i];
  }
  double det = ss * cc - sc * sc;
  double a = (sy * cc - cy * sc) / det, b = (cy * ss - sy * sc) / det;
  double residual = 0;
  for (int64_t i = 0; i < n; ++i)
    residual = std::max(
        residual, std::abs(a * std::sin(x[i]) + b * std::cos(x[i]) - y[i]));
  return {std::hypot(a, b), std::atan2(-b, a), residual};
}

TEST(Sinusoid, TasksFollowTheDistribution) {
  const int64_t tasks = 4000, samples = 20;
  Tasks t(mamlConfig(METART_F64, samples, samples));
  auto draw = drawTasks<double>(t.tasks, METART_SPLIT_TRAIN, 0, 0, tasks);
  double amplitudeSum = 0, phaseSum = 0, xSum = 0, xSquares = 0;
  double xMin = 5, xMax = -5;
  int64_t smallAmplitudes = 0;
  for (int64_t k = 0; k < tasks; ++k) {
    const double *sx = &draw.supportX[k * samples];
    const double *qx = &draw.queryX[k * samples];
    Fit support = fitSinusoid(sx, &draw.supportY[k * samples], samples);
    Fit query = fitSinusoid(qx, &draw.queryY[k * samples], samples);
    ASSERT_LT(support.residual, 1e-9) << "task " << k;
    ASSERT_NEAR(support.amplitude, query.amplitude, 1e-9) << "task " << k;
    ASSERT_NEAR(support.phase, query.phase, 1e-9) << "task " << k;
    ASSERT_GE(support.amplitude, 0.1 - 1e-9);
    ASSERT_LE(support.amplitude, 5.0 + 1e-9);
    ASSERT_GE(support.phase, -1e-9);
    ASSERT_LE(support.phase, M_PI + 1e-9);
    amplitudeSum += support.amplitude;
    phaseSum += support.phase;
    smallAmplitudes += support.amplitude < 2.55;
    for (const double *x : {sx, qx})
      for (int64_t i = 0; i < samples; ++i) {
        xSum += x[i], xSquares += x[i] * x[i];
        xMin = std::min(xMin, x[i]), xMax = std::max(xMax, x[i]);
      }
  }
  // Means within 5 standard deviations of uniform distributions' means.
  double n = static_cast<double>(tasks);
  EXPECT_NEAR(amplitudeSum / n, 2.55, 5 * 4.9 / std::sqrt(12 * n));
  EXPECT_NEAR(phaseSum / n, M_PI / 2, 5 * M_PI / std::sqrt(12 * n));
  EXPECT_NEAR(static_cast<double>(smallAmplitudes) / n, 0.5,
              5 * 0.5 / std::sqrt(n));
  double xs = 2.0 * tasks * samples;
  EXPECT_NEAR(xSum / xs, 0.0, 5 * 10 / std::sqrt(12 * xs));
  EXPECT_NEAR(xSquares / xs, 100.0 / 12, 0.1);
  EXPECT_GE(xMin, -5.0);
  EXPECT_LT(xMax, 5.0);
  EXPECT_LT(xMin, -4.99);
  EXPECT_GT(xMax, 4.99);
}

TEST(Sinusoid, CreateChecksTheConfiguration) {
  auto expectError = [](metart_sinusoid_config config,
                        const std::string &message) {
    metart_tasks *tasks = reinterpret_cast<metart_tasks *>(1);
    EXPECT_EQ(metart_tasks_create_sinusoid(&config, 0, &tasks),
              METART_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tasks, nullptr);
    EXPECT_EQ(std::string(metart_tasks_last_error(nullptr)),
              "metart_tasks_create_sinusoid: " + message);
  };
  auto config = mamlConfig();
  config.amplitude[0] = 6;
  expectError(config, "amplitude range [6, 5] is not finite with low <= high");
  config = mamlConfig();
  config.input[0] = NAN;
  expectError(config, "input range [nan, 5] is not finite with low <= high");
  config = mamlConfig();
  config.phase[1] = INFINITY;
  expectError(config, "phase range [0, inf] is not finite with low <= high");
  config = mamlConfig();
  config.support = -1;
  expectError(config, "support (-1) and query (10) must not be negative");
  config = mamlConfig(METART_I64);
  expectError(config, "dtype 3 is not METART_F32 or METART_F64");

  metart_tasks *tasks = nullptr;
  EXPECT_EQ(metart_tasks_create_sinusoid(nullptr, 0, &tasks),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_tasks_last_error(nullptr),
               "metart_tasks_create_sinusoid: config is null");
  config = mamlConfig();
  EXPECT_EQ(metart_tasks_create_sinusoid(&config, 0, nullptr),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_tasks_last_error(nullptr),
               "metart_tasks_create_sinusoid: out_tasks is null");
}

TEST(Sinusoid, DrawChecksItsArguments) {
  Tasks t(mamlConfig(METART_F64, 2, 3));
  double a[6], b[6], c[9], d[9];
  auto expectError = [&](metart_status status, const std::string &message) {
    EXPECT_EQ(status, METART_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(metart_tasks_last_error(t.tasks)),
              "metart_tasks_draw: " + message);
  };
  EXPECT_STREQ(metart_tasks_last_error(t.tasks), "");
  expectError(metartTestDrawWithSplit(t.tasks, 2, 3, a, b, c, d),
              "split is 2, not METART_SPLIT_TRAIN or METART_SPLIT_EVAL");
  expectError(
      metart_tasks_draw(t.tasks, METART_SPLIT_TRAIN, 0, -1, 3, a, b, c, d),
      "iteration 0, first -1 and count 3 must not be negative");
  expectError(metart_tasks_draw(t.tasks, METART_SPLIT_TRAIN, 0, INT64_MAX, 3, a,
                                b, c, d),
              "first + count overflows");
  expectError(
      metart_tasks_draw(t.tasks, METART_SPLIT_TRAIN, 0, 0, 3, a, b, c, nullptr),
      "query_targets is null");
  EXPECT_EQ(metart_tasks_draw(t.tasks, METART_SPLIT_TRAIN, 0, 0, 0, nullptr,
                              nullptr, nullptr, nullptr),
            METART_OK)
      << "an empty draw needs no buffers";
  EXPECT_EQ(metart_tasks_draw(nullptr, METART_SPLIT_TRAIN, 0, 0, 0, nullptr,
                              nullptr, nullptr, nullptr),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_tasks_last_error(nullptr),
               "metart_tasks_draw: tasks is null");

  int32_t dtype;
  int32_t rank;
  const int64_t *shape;
  EXPECT_EQ(metart_tasks_sample_type(t.tasks, 2, &dtype, &rank, &shape),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_tasks_last_error(t.tasks),
               "metart_tasks_sample_type: which is 2, not 0 (inputs) or 1 "
               "(targets)");
  EXPECT_EQ(metart_tasks_sample_type(t.tasks, 0, nullptr, &rank, &shape),
            METART_ERROR_INVALID_ARGUMENT);
  int64_t support = -1, query = -1;
  metart_tasks_sizes(nullptr, &support, &query);
  EXPECT_EQ(support, 0);
  EXPECT_EQ(query, 0);
}

} // namespace
