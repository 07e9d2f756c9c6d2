//===- SequenceTest.cpp - the sequence task distribution ------------------===//
//
// Exact reproducibility (the same arguments give the same bytes, a draw is
// the concatenation of its slices, splits, iterations, seeds and tasks
// differ, the support size leaves the query alone), the task's rule (every
// target is one permutation of the previous input token, the same for the
// support and the query set) and the statistics: tokens and permutations
// uniform.
//
//===----------------------------------------------------------------------===//

#include "TaskDraw.h"

#include "metart/data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

using metart::test::drawTasks;
using metart::test::TaskDraw;

namespace {

using Draw = TaskDraw<int64_t>;

metart_sequence_config sequenceConfig(int64_t vocab = 16, int64_t length = 8,
                                      int64_t support = 10,
                                      int64_t query = 10) {
  return {vocab, length, support, query};
}

/// A handle that destroys itself.
struct Tasks {
  explicit Tasks(const metart_sequence_config &config, uint64_t seed = 1234) {
    EXPECT_EQ(metart_tasks_create_sequence(&config, seed, &tasks), METART_OK)
        << metart_tasks_last_error(nullptr);
  }
  ~Tasks() { metart_tasks_destroy(tasks); }
  Tasks(const Tasks &) = delete;
  Tasks &operator=(const Tasks &) = delete;

  metart_tasks *tasks = nullptr;
};

Draw draw(const Tasks &t, metart_split split, int64_t iteration, int64_t first,
          int64_t count) {
  return drawTasks<int64_t>(t.tasks, split, iteration, first, count);
}

/// The permutation a task's samples reveal (-1 where none shows it), after
/// checking that every target is the mapped previous token and that tokens
/// are in [0, vocab).
std::vector<int64_t> revealPermutation(const Draw &d, int64_t task,
                                       int64_t vocab, int64_t length) {
  std::vector<int64_t> pi(vocab, -1);
  for (bool query : {false, true}) {
    const std::vector<int64_t> &xs = query ? d.queryX : d.supportX;
    const std::vector<int64_t> &ys = query ? d.queryY : d.supportY;
    int64_t perTask = static_cast<int64_t>(xs.size()) / d.tasks;
    for (int64_t j = task * perTask; j < (task + 1) * perTask; j += length)
      for (int64_t t = 0; t < length; ++t) {
        int64_t x = xs[j + (t ? t - 1 : 0)], y = ys[j + t];
        EXPECT_GE(xs[j + t], 0);
        EXPECT_LT(xs[j + t], vocab);
        EXPECT_GE(y, 0);
        EXPECT_LT(y, vocab);
        if (x < 0 || x >= vocab)
          continue;
        if (pi[x] >= 0)
          EXPECT_EQ(pi[x], y)
              << "task " << task << ": token " << x << " maps to two targets";
        pi[x] = y;
      }
  }
  return pi;
}

TEST(Sequence, DescribesItsSamples) {
  Tasks t(sequenceConfig(16, 8, 5, 7));
  int64_t support = 0, query = 0;
  metart_tasks_sizes(t.tasks, &support, &query);
  EXPECT_EQ(support, 5);
  EXPECT_EQ(query, 7);
  for (int which : {0, 1}) {
    int32_t dtype = -1, rank = -1;
    const int64_t *shape = nullptr;
    ASSERT_EQ(metart_tasks_sample_type(t.tasks, which, &dtype, &rank, &shape),
              METART_OK);
    EXPECT_EQ(dtype, METART_I64);
    ASSERT_EQ(rank, 1);
    EXPECT_EQ(shape[0], 8);
  }
}

TEST(Sequence, SameArgumentsGiveTheSameBytes) {
  Tasks a(sequenceConfig()), b(sequenceConfig());
  auto first = draw(a, METART_SPLIT_TRAIN, 17, 3, 8);
  EXPECT_TRUE(first == draw(a, METART_SPLIT_TRAIN, 17, 3, 8));
  EXPECT_TRUE(first == draw(b, METART_SPLIT_TRAIN, 17, 3, 8))
      << "a new handle with the same seed draws the same tasks";
}

TEST(Sequence, ADrawIsTheConcatenationOfItsSlices) {
  Tasks t(sequenceConfig());
  for (metart_split split : {METART_SPLIT_TRAIN, METART_SPLIT_EVAL}) {
    auto whole = draw(t, split, 4, 0, 25);
    EXPECT_TRUE(whole == draw(t, split, 4, 0, 10) + draw(t, split, 4, 10, 15));
    EXPECT_TRUE(whole.slice(7, 1) == draw(t, split, 4, 7, 1));
    // Five ranks drawing five tasks each.
    Draw ranks;
    for (int64_t rank = 0; rank < 5; ++rank)
      ranks = ranks + draw(t, split, 4, 5 * rank, 5);
    EXPECT_TRUE(whole == ranks);
  }
}

TEST(Sequence, SplitsIterationsSeedsAndIndicesDiffer) {
  Tasks t(sequenceConfig()), other(sequenceConfig(), 1235);
  auto base = draw(t, METART_SPLIT_TRAIN, 0, 0, 2);
  EXPECT_NE(base.supportX, draw(t, METART_SPLIT_EVAL, 0, 0, 2).supportX);
  EXPECT_NE(base.supportX, draw(t, METART_SPLIT_TRAIN, 1, 0, 2).supportX);
  EXPECT_NE(base.supportX, draw(other, METART_SPLIT_TRAIN, 0, 0, 2).supportX);
  EXPECT_NE(base.slice(0, 1).supportX, base.slice(1, 1).supportX);
  EXPECT_NE(revealPermutation(base, 0, 16, 8),
            revealPermutation(base, 1, 16, 8));
  EXPECT_NE(base.supportX, base.queryX)
      << "support and query are drawn independently";
}

TEST(Sequence, SetSizesDoNotChangeOtherSamples) {
  Tasks small(sequenceConfig(16, 8, 5, 10)),
      large(sequenceConfig(16, 8, 20, 10));
  auto a = draw(small, METART_SPLIT_TRAIN, 2, 0, 1);
  auto b = draw(large, METART_SPLIT_TRAIN, 2, 0, 1);
  EXPECT_EQ(a.queryX, b.queryX);
  EXPECT_EQ(a.queryY, b.queryY);
  EXPECT_EQ(a.supportX, std::vector<int64_t>(b.supportX.begin(),
                                             b.supportX.begin() + 5 * 8));
}

TEST(Sequence, TargetsAreThePermutationOfThePreviousToken) {
  // 40 samples of 8 tokens see all of a 16-token vocabulary with
  // probability 1 - 16 (15/16)^320, about 1 - 1e-7.
  const int64_t vocab = 16, length = 8, tasks = 50;
  Tasks t(sequenceConfig(vocab, length, 20, 20));
  auto d = draw(t, METART_SPLIT_TRAIN, 3, 0, tasks);
  for (int64_t k = 0; k < tasks; ++k) {
    std::vector<int64_t> pi = revealPermutation(d, k, vocab, length);
    std::vector<int64_t> seen(vocab, 0);
    for (int64_t v = 0; v < vocab; ++v) {
      ASSERT_GE(pi[v], 0) << "task " << k << " never shows token " << v;
      ++seen[pi[v]];
    }
    EXPECT_EQ(seen, std::vector<int64_t>(vocab, 1))
        << "task " << k << " maps two tokens to one";
  }
}

TEST(Sequence, TokensAndPermutationsAreUniform) {
  // Three tokens: six permutations, each a sixth of 6000 tasks.
  const int64_t vocab = 3, length = 4, tasks = 6000, samples = 30;
  Tasks t(sequenceConfig(vocab, length, samples, samples));
  auto d = draw(t, METART_SPLIT_EVAL, 0, 0, tasks);
  std::map<std::vector<int64_t>, int64_t> permutations;
  for (int64_t k = 0; k < tasks; ++k)
    ++permutations[revealPermutation(d, k, vocab, length)];
  ASSERT_EQ(permutations.size(), 6u);
  double p = 1.0 / 6, n = static_cast<double>(tasks);
  for (const auto &[pi, count] : permutations)
    EXPECT_NEAR(count / n, p, 5 * std::sqrt(p * (1 - p) / n));
  std::vector<int64_t> tokens(vocab, 0);
  for (int64_t x : d.supportX)
    ++tokens[x];
  double m = static_cast<double>(d.supportX.size()), q = 1.0 / vocab;
  for (int64_t count : tokens)
    EXPECT_NEAR(count / m, q, 5 * std::sqrt(q * (1 - q) / m));
}

TEST(Sequence, CreateChecksTheConfiguration) {
  auto expectError = [](metart_sequence_config config,
                        const std::string &message) {
    metart_tasks *tasks = reinterpret_cast<metart_tasks *>(1);
    EXPECT_EQ(metart_tasks_create_sequence(&config, 0, &tasks),
              METART_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(tasks, nullptr);
    EXPECT_EQ(std::string(metart_tasks_last_error(nullptr)),
              "metart_tasks_create_sequence: " + message);
  };
  expectError(sequenceConfig(1), "vocab (1) must be between 2 and 1048576");
  expectError(sequenceConfig(int64_t(1) << 21),
              "vocab (2097152) must be between 2 and 1048576");
  expectError(sequenceConfig(16, 1), "length (1) must be at least 2");
  expectError(sequenceConfig(16, 8, -1, 3),
              "support (-1) and query (3) must not be negative");
  expectError(sequenceConfig(16, 8, 3, -2),
              "support (3) and query (-2) must not be negative");

  metart_tasks *tasks = nullptr;
  EXPECT_EQ(metart_tasks_create_sequence(nullptr, 0, &tasks),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_tasks_last_error(nullptr),
               "metart_tasks_create_sequence: config is null");
  auto config = sequenceConfig();
  EXPECT_EQ(metart_tasks_create_sequence(&config, 0, nullptr),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_tasks_last_error(nullptr),
               "metart_tasks_create_sequence: out_tasks is null");
}

TEST(Sequence, EmptySetsDrawNothing) {
  Tasks t(sequenceConfig(16, 8, 0, 4));
  auto d = draw(t, METART_SPLIT_TRAIN, 0, 0, 3);
  EXPECT_TRUE(d.supportX.empty());
  EXPECT_EQ(d.queryX.size(), 3u * 4 * 8);
}

} // namespace
