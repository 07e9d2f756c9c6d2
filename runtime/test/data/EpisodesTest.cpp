//===- EpisodesTest.cpp - fixed episodes from a safetensors file ----------===//
//
// Episodes written by the test with the C API are drawn back by the rule of
// metart/data.h (eval: i mod N; train: a golden-ratio offset per
// iteration, recomputed here with 128-bit arithmetic), slices agree with
// whole draws, and files that do not hold episodes are refused with a
// message saying why.
//
//===----------------------------------------------------------------------===//

#include "TaskDraw.h"
#include "TestFiles.h"

#include "metart/data.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

using metart::test::drawTasks;
using metart::test::ScratchDirectory;

namespace {

constexpr int64_t kEpisodes = 7, kSupport = 3, kQuery = 4, kWidth = 2;

/// Input component c of sample s of episode e (query samples from 1000).
float inputValue(int64_t e, int64_t s, int64_t c, bool query) {
  return static_cast<float>((query ? 1000 : 0) + 100 * e + 10 * s + c);
}
/// The label of sample s of episode e.
int64_t labelValue(int64_t e, int64_t s, bool query) {
  return (query ? 1000 : 0) + 10 * e + s;
}

/// 128-bit integers (a GCC and Clang extension), for a second computation of
/// the train split's offsets.
__extension__ typedef unsigned __int128 Uint128;

/// The episode that task i of draw t takes in the train split, computed
/// independently of the runtime's 64-bit version.
int64_t trainEpisode(int64_t t, int64_t i, int64_t n) {
  Uint128 fraction = static_cast<uint64_t>(t) * 0x9E3779B97F4A7C15ull;
  uint64_t offset = static_cast<uint64_t>((fraction * n) >> 64);
  return static_cast<int64_t>((offset + static_cast<uint64_t>(i)) % n);
}

class Episodes : public ::testing::Test {
protected:
  /// Writes N episodes of f32 inputs [2] and i64 labels to `path`.
  void writeEpisodes() {
    for (bool query : {false, true}) {
      int64_t samples = query ? kQuery : kSupport;
      auto &x = query ? queryX : supportX;
      auto &y = query ? queryY : supportY;
      for (int64_t e = 0; e < kEpisodes; ++e)
        for (int64_t s = 0; s < samples; ++s) {
          y.push_back(labelValue(e, s, query));
          for (int64_t c = 0; c < kWidth; ++c)
            x.push_back(inputValue(e, s, c, query));
        }
    }
    int64_t sxShape[] = {kEpisodes, kSupport, kWidth},
            syShape[] = {kEpisodes, kSupport},
            qxShape[] = {kEpisodes, kQuery, kWidth},
            qyShape[] = {kEpisodes, kQuery};
    metart_named_tensor tensors[] = {
        {"support.x", METART_F32, 3, sxShape, supportX.data()},
        {"support.y", METART_I64, 2, syShape, supportY.data()},
        {"query.x", METART_F32, 3, qxShape, queryX.data()},
        {"query.y", METART_I64, 2, qyShape, queryY.data()},
    };
    char error[256];
    ASSERT_EQ(metart_safetensors_write(path.c_str(), tensors, 4, error,
                                       sizeof(error)),
              METART_OK)
        << error;
  }

  void SetUp() override {
    writeEpisodes();
    ASSERT_EQ(metart_tasks_create_episodes(path.c_str(), &tasks), METART_OK)
        << metart_tasks_last_error(nullptr);
  }
  void TearDown() override { metart_tasks_destroy(tasks); }

  /// Expects the draw of tasks [first, first + count) of (split, t) to hold
  /// the episodes `expected(i)`.
  template <typename Expected>
  void expectEpisodes(metart_split split, int64_t t, int64_t first,
                      int64_t count, Expected expected) {
    auto draw = drawTasks<float, int64_t>(tasks, split, t, first, count);
    for (int64_t k = 0; k < count; ++k) {
      int64_t e = expected(first + k);
      SCOPED_TRACE("task " + std::to_string(first + k) + " = episode " +
                   std::to_string(e));
      for (int64_t s = 0; s < kSupport; ++s) {
        ASSERT_EQ(draw.supportY[k * kSupport + s], labelValue(e, s, false));
        for (int64_t c = 0; c < kWidth; ++c)
          ASSERT_EQ(draw.supportX[(k * kSupport + s) * kWidth + c],
                    inputValue(e, s, c, false));
      }
      for (int64_t s = 0; s < kQuery; ++s) {
        ASSERT_EQ(draw.queryY[k * kQuery + s], labelValue(e, s, true));
        for (int64_t c = 0; c < kWidth; ++c)
          ASSERT_EQ(draw.queryX[(k * kQuery + s) * kWidth + c],
                    inputValue(e, s, c, true));
      }
    }
  }

  ScratchDirectory dir;
  std::string path = dir.path("episodes.safetensors");
  std::vector<float> supportX, queryX;
  std::vector<int64_t> supportY, queryY;
  metart_tasks *tasks = nullptr;
};

TEST_F(Episodes, DescribesTheirSamples) {
  int64_t support = 0, query = 0;
  metart_tasks_sizes(tasks, &support, &query);
  EXPECT_EQ(support, kSupport);
  EXPECT_EQ(query, kQuery);
  int32_t dtype = -1, rank = -1;
  const int64_t *shape = nullptr;
  ASSERT_EQ(metart_tasks_sample_type(tasks, 0, &dtype, &rank, &shape),
            METART_OK);
  EXPECT_EQ(dtype, METART_F32);
  ASSERT_EQ(rank, 1);
  EXPECT_EQ(shape[0], kWidth);
  ASSERT_EQ(metart_tasks_sample_type(tasks, 1, &dtype, &rank, &shape),
            METART_OK);
  EXPECT_EQ(dtype, METART_I64);
  EXPECT_EQ(rank, 0);
}

TEST_F(Episodes, EvalTakesEpisodesInOrder) {
  for (int64_t t : {0, 1, 99})
    expectEpisodes(METART_SPLIT_EVAL, t, 0, 16,
                   [](int64_t i) { return i % kEpisodes; });
  expectEpisodes(METART_SPLIT_EVAL, 3, 5, 4,
                 [](int64_t i) { return i % kEpisodes; });
}

TEST_F(Episodes, TrainOffsetsEveryIteration) {
  for (int64_t t : {0ll, 1ll, 2ll, 3ll, 1000ll, 123456789012ll})
    expectEpisodes(METART_SPLIT_TRAIN, t, 0, 9,
                   [&](int64_t i) { return trainEpisode(t, i, kEpisodes); });
  expectEpisodes(METART_SPLIT_TRAIN, 0, 0, 3, [](int64_t i) { return i; });
  // Successive iterations of meta-batch 1 reach every episode quickly.
  std::set<int64_t> used;
  for (int64_t t = 0; t < 2 * kEpisodes; ++t)
    used.insert(trainEpisode(t, 0, kEpisodes));
  EXPECT_EQ(used.size(), static_cast<size_t>(kEpisodes));
}

TEST_F(Episodes, ADrawIsTheConcatenationOfItsSlices) {
  for (metart_split split : {METART_SPLIT_TRAIN, METART_SPLIT_EVAL}) {
    auto whole = drawTasks<float, int64_t>(tasks, split, 11, 0, 20);
    auto parts = drawTasks<float, int64_t>(tasks, split, 11, 0, 6) +
                 drawTasks<float, int64_t>(tasks, split, 11, 6, 14);
    EXPECT_TRUE(whole == parts);
  }
}

/// Files of tensors with given names, dtypes and shapes (and zeros).
class BadEpisodes : public ::testing::Test {
protected:
  struct Spec {
    const char *name;
    int32_t dtype;
    std::vector<int64_t> shape;
  };

  void write(const std::vector<Spec> &specs) {
    std::vector<metart_named_tensor> tensors;
    std::vector<double> zeros(1024);
    for (const Spec &spec : specs)
      tensors.push_back({spec.name, spec.dtype,
                         static_cast<int32_t>(spec.shape.size()),
                         spec.shape.data(), zeros.data()});
    ASSERT_EQ(metart_safetensors_write(path.c_str(), tensors.data(),
                                       static_cast<int64_t>(tensors.size()),
                                       nullptr, 0),
              METART_OK);
  }

  /// Expects creating episodes from a file of `specs` to fail with `status`
  /// and "<function>: <path>: `problem`".
  void expectError(const std::vector<Spec> &specs, const std::string &problem,
                   metart_status status = METART_ERROR_INVALID_ARGUMENT) {
    write(specs);
    expectOpenError(problem, status);
  }

  void expectOpenError(const std::string &problem,
                       metart_status status = METART_ERROR_INVALID_ARGUMENT) {
    metart_tasks *tasks = reinterpret_cast<metart_tasks *>(1);
    EXPECT_EQ(metart_tasks_create_episodes(path.c_str(), &tasks), status);
    EXPECT_EQ(tasks, nullptr);
    EXPECT_EQ(std::string(metart_tasks_last_error(nullptr)),
              "metart_tasks_create_episodes: " + path + ": " + problem);
  }

  /// Valid regression episodes: 5 of 2 support and 3 query samples.
  static std::vector<Spec> valid() {
    return {{"support.x", METART_F64, {5, 2, 1}},
            {"support.y", METART_F32, {5, 2, 1}},
            {"query.x", METART_F64, {5, 3, 1}},
            {"query.y", METART_F32, {5, 3, 1}}};
  }

  ScratchDirectory dir;
  std::string path = dir.path("bad.safetensors");
};

TEST_F(BadEpisodes, RegressionEpisodesAreValid) {
  write(valid());
  metart_tasks *tasks = nullptr;
  ASSERT_EQ(metart_tasks_create_episodes(path.c_str(), &tasks), METART_OK)
      << metart_tasks_last_error(nullptr);
  for (auto [which, expected] :
       {std::pair(0, METART_F64), std::pair(1, METART_F32)}) {
    int32_t dtype = -1, rank = -1;
    const int64_t *shape = nullptr;
    ASSERT_EQ(metart_tasks_sample_type(tasks, which, &dtype, &rank, &shape),
              METART_OK);
    EXPECT_EQ(dtype, expected);
    ASSERT_EQ(rank, 1);
    EXPECT_EQ(shape[0], 1);
  }
  auto draw = drawTasks<double, float>(tasks, METART_SPLIT_TRAIN, 1, 0, 8);
  EXPECT_EQ(draw.supportX, std::vector<double>(16, 0.0));
  metart_tasks_destroy(tasks);
}

TEST_F(BadEpisodes, MissingTensors) {
  auto specs = valid();
  specs.erase(specs.begin() + 2);
  expectError(specs, "no tensor \"query.x\" (fixed episodes are support.x, "
                     "support.y, query.x and query.y)");
}

TEST_F(BadEpisodes, WrongRanksAndDtypes) {
  auto specs = valid();
  specs[1].shape = {5};
  expectError(specs, "support.y has shape [5], not [episodes, samples, "
                     "sample shape...]");
  specs = valid();
  specs[2].dtype = METART_F32;
  expectError(specs, "support and query samples differ: support.x [5, 2, 1] "
                     "F64, query.x [5, 3, 1] F32");
  specs = valid();
  specs[3].shape = {5, 3, 2};
  expectError(specs, "support and query samples differ: support.y [5, 2, 1] "
                     "F32, query.y [5, 3, 2] F32");
}

TEST_F(BadEpisodes, CountsDisagree) {
  auto specs = valid();
  specs[3].shape = {4, 3, 1};
  expectError(specs, "the tensors disagree on the number of episodes: "
                     "support.x [5, 2, 1] F64, query.y [4, 3, 1] F32");
  specs = valid();
  specs[1].shape = {5, 3, 1};
  expectError(specs, "the inputs and targets disagree on the number of "
                     "samples: support.x [5, 2, 1] F64, support.y [5, 3, 1] "
                     "F32");
  specs = valid();
  for (Spec &spec : specs)
    spec.shape[0] = 0;
  expectError(specs, "the file has no episodes: support.x [0, 2, 1] F64");
}

TEST_F(BadEpisodes, FileErrorsPassThrough) {
  expectOpenError("cannot open the file: No such file or directory",
                  METART_ERROR_IO);
  metart::test::writeFile(path, "short");
  expectOpenError("the file has 5 bytes, fewer than the 8 of the header "
                  "length",
                  METART_ERROR_IO);
  metart_tasks *tasks = nullptr;
  EXPECT_EQ(metart_tasks_create_episodes(nullptr, &tasks),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_tasks_last_error(nullptr),
               "metart_tasks_create_episodes: path is null");
}

} // namespace
