//===- EvaluationTest.cpp - statistics of evaluations with diverged tasks -===//
//
// summarizeEvaluation against values worked out by hand: diverged tasks
// (NaN, infinite, above the threshold) are counted and left out of the mean
// and interval, the median ranks them as +infinity, and the metrics line
// holds no NaN.
//
//===----------------------------------------------------------------------===//

#include "train/Evaluation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace {

using metart::train::summarizeEvaluation;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Evaluation, WithoutDivergenceIsTheMeanAndItsInterval) {
  // Mean 2, sample standard deviation 1: half-width 1.96 / sqrt(3).
  metart_eval_result r = summarizeEvaluation(10, {1, 2, 3}, nullptr, 0);
  EXPECT_EQ(r.steps, 10);
  EXPECT_EQ(r.count, 3);
  EXPECT_EQ(r.diverged, 0);
  EXPECT_DOUBLE_EQ(r.mean, 2);
  EXPECT_DOUBLE_EQ(r.ci95, 1.96 / std::sqrt(3.0));
  EXPECT_DOUBLE_EQ(r.median, 2);
  EXPECT_EQ(r.has_accuracy, 0);
}

TEST(Evaluation, DivergedTasksAreCountedAndLeftOut) {
  // NaN, +inf and 750 (above 100) diverge; 1, 2, 3 remain.
  std::vector<double> losses = {1, kNaN, 2, 750, kInf, 3};
  metart_eval_result r = summarizeEvaluation(7, losses, nullptr, 100);
  EXPECT_EQ(r.count, 6);
  EXPECT_EQ(r.diverged, 3);
  EXPECT_EQ(r.nonfinite, 2);
  EXPECT_DOUBLE_EQ(r.mean, 2);
  EXPECT_DOUBLE_EQ(r.ci95, 1.96 / std::sqrt(3.0));
  // Ranked 1, 2, 3, inf, inf, inf: the lower middle is 3.
  EXPECT_DOUBLE_EQ(r.median, 3);
  EXPECT_DOUBLE_EQ(r.diverge_above, 100);
  // Without a threshold only the non-finite ones diverge.
  r = summarizeEvaluation(7, losses, nullptr, 0);
  EXPECT_EQ(r.diverged, 2);
  EXPECT_DOUBLE_EQ(r.mean, (1 + 2 + 750 + 3) / 4.0);
}

TEST(Evaluation, AccuracyCoversTheSameTasks) {
  std::vector<double> losses = {0.5, kNaN, 1.5}, hits = {1.0, 0.0, 0.5};
  metart_eval_result r = summarizeEvaluation(1, losses, &hits, 0);
  EXPECT_EQ(r.has_accuracy, 1);
  EXPECT_DOUBLE_EQ(r.accuracy, 0.75);
}

TEST(Evaluation, EveryTaskDivergedLeavesNoNaN) {
  metart_eval_result r = summarizeEvaluation(10, {kNaN, kInf}, nullptr, 0);
  EXPECT_EQ(r.diverged, 2);
  EXPECT_FALSE(std::isnan(r.mean));
  EXPECT_FALSE(std::isnan(r.ci95));
  EXPECT_TRUE(std::isinf(r.median));
  // The metrics line is JSON: no NaN or Infinity, null instead.
  char buffer[1024] = "";
  FILE *file = fmemopen(buffer, sizeof(buffer), "w");
  ASSERT_NE(file, nullptr);
  metart::train::writeEvaluationJson(file, r);
  std::fclose(file);
  std::string line(buffer);
  EXPECT_EQ(line.find("nan"), std::string::npos) << line;
  EXPECT_EQ(line.find("inf"), std::string::npos) << line;
  EXPECT_NE(line.find("\"median\": null"), std::string::npos) << line;
  EXPECT_NE(line.find("\"loss\": null"), std::string::npos) << line;
  EXPECT_NE(line.find("\"diverged\": 2"), std::string::npos) << line;
}

} // namespace
