//===- RandomTest.cpp - the generator behind task sampling ----------------===//
//
// splitmix64 against the published outputs of its reference code, uniform
// doubles in range with the right mean, uniform integers below a bound, and
// task keys that do not collide over a grid of (seed, split, iteration,
// index).
//
//===----------------------------------------------------------------------===//

#include "data/Random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <unordered_set>

using namespace metart::data;

namespace {

TEST(Random, SplitMix64MatchesTheReference) {
  // The first outputs of splitmix64.c (Vigna) seeded with 1234567.
  SplitMix64 random(1234567);
  for (uint64_t expected :
       {6457827717110365317ull, 3203168211198807973ull, 9817491932198370423ull,
        4593380528125082431ull, 16408922859458223821ull})
    EXPECT_EQ(random.next(), expected);
}

TEST(Random, UniformStaysInRangeWithTheRightMean) {
  SplitMix64 random(42);
  const int n = 200000;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    double u = random.uniform(-5.0, 5.0);
    ASSERT_GE(u, -5.0);
    ASSERT_LT(u, 5.0);
    sum += u;
  }
  // The mean of n uniforms on [-5, 5] has standard deviation 10/sqrt(12 n).
  EXPECT_NEAR(sum / n, 0.0, 5 * 10 / std::sqrt(12.0 * n));
  EXPECT_EQ(SplitMix64(7).uniform(2.5, 2.5), 2.5);
}

TEST(Random, TaskKeysDoNotCollide) {
  std::unordered_set<uint64_t> keys;
  int count = 0;
  for (uint64_t seed : {0ull, 1ull, ~0ull})
    for (uint64_t split = 0; split < 2; ++split)
      for (uint64_t iteration = 0; iteration < 40; ++iteration)
        for (uint64_t index = 0; index < 40; ++index, ++count)
          keys.insert(hashWords({seed, split, iteration, index}));
  EXPECT_EQ(keys.size(), static_cast<size_t>(count));
  EXPECT_NE(hashWords({1, 2}), hashWords({2, 1}));
}

TEST(Random, BelowIsUniformOverItsRange) {
  SplitMix64 random(42);
  const int n = 70000;
  int counts[7] = {};
  for (int i = 0; i < n; ++i) {
    uint64_t k = random.below(7);
    ASSERT_LT(k, 7u);
    ++counts[k];
  }
  // Each count is binomial(n, 1/7): within 5 standard deviations.
  for (int count : counts)
    EXPECT_NEAR(count, n / 7.0, 5 * std::sqrt(n * (1 / 7.0) * (6 / 7.0)));
  EXPECT_EQ(SplitMix64(3).below(1), 0u);
  // 2^63 + 1 rejects almost half of the words: still in range.
  for (int i = 0; i < 100; ++i)
    ASSERT_LE(random.below((1ull << 63) + 1), 1ull << 63);
}

} // namespace
