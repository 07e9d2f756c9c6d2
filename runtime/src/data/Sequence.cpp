//===- Sequence.cpp - token sequences mapped by a per-task permutation ----===//
//
// Task i of draw `iteration` of `split` is a permutation pi of the
// vocabulary (Fisher-Yates); each sample is a sequence x of uniform tokens
// with targets y[0] = pi(x[0]), y[t] = pi(x[t - 1]): a model must learn pi
// from the support set and look one token back, which causal attention
// can. As for the sinusoid, the permutation, the support set and the query
// set each come from their own generator seeded by a hash of (seed, split,
// iteration, i, stream), so a task never depends on which other tasks are
// drawn with it, nor its query samples on the support size.
//
//===----------------------------------------------------------------------===//

#include "data/Random.h"
#include "data/Tasks.h"

#include <numeric>
#include <utility>

using namespace metart::data;

namespace {

/// Which stream of a task a generator draws.
enum class Stream : uint64_t { Permutation = 0, Support = 1, Query = 2 };

/// The largest vocabulary: a draw holds one permutation of it.
constexpr int64_t kMaxVocab = int64_t(1) << 20;

class Sequence : public TaskSource {
public:
  Sequence(const metart_sequence_config &config, uint64_t seed)
      : TaskSource({{METART_I64, {config.length}},
                    {METART_I64, {config.length}},
                    config.support,
                    config.query}),
        config(config), seed(seed) {}

  void draw(metart_split split, int64_t iteration, int64_t first, int64_t count,
            const DrawBuffers &buffers) const override {
    const int64_t support = config.support, query = config.query;
    const int64_t length = config.length;
    std::vector<int64_t> permutation(static_cast<size_t>(config.vocab));
    for (int64_t k = 0; k < count; ++k) {
      int64_t index = first + k;
      drawPermutation(generator(split, iteration, index, Stream::Permutation),
                      permutation);
      drawSet(generator(split, iteration, index, Stream::Support), permutation,
              support,
              static_cast<int64_t *>(buffers.supportInputs) +
                  k * support * length,
              static_cast<int64_t *>(buffers.supportTargets) +
                  k * support * length);
      drawSet(
          generator(split, iteration, index, Stream::Query), permutation, query,
          static_cast<int64_t *>(buffers.queryInputs) + k * query * length,
          static_cast<int64_t *>(buffers.queryTargets) + k * query * length);
    }
  }

private:
  /// The generator of `stream` of task `index`.
  SplitMix64 generator(metart_split split, int64_t iteration, int64_t index,
                       Stream stream) const {
    return SplitMix64(hashWords(
        {seed, static_cast<uint64_t>(split), static_cast<uint64_t>(iteration),
         static_cast<uint64_t>(index), static_cast<uint64_t>(stream)}));
  }

  /// Fills `permutation` with a uniform permutation of [0, vocab).
  static void drawPermutation(SplitMix64 random,
                              std::vector<int64_t> &permutation) {
    std::iota(permutation.begin(), permutation.end(), int64_t(0));
    for (size_t i = permutation.size() - 1; i > 0; --i)
      std::swap(permutation[i], permutation[random.below(i + 1)]);
  }

  /// Writes `samples` sequences from `random` to `x` and their targets
  /// under `permutation` to `y`.
  void drawSet(SplitMix64 random, const std::vector<int64_t> &permutation,
               int64_t samples, int64_t *x, int64_t *y) const {
    const int64_t length = config.length;
    auto vocab = static_cast<uint64_t>(config.vocab);
    for (int64_t j = 0; j < samples * length; j += length) {
      for (int64_t t = 0; t < length; ++t)
        x[j + t] = static_cast<int64_t>(random.below(vocab));
      y[j] = permutation[x[j]];
      for (int64_t t = 1; t < length; ++t)
        y[j + t] = permutation[x[j + t - 1]];
    }
  }

  metart_sequence_config config;
  uint64_t seed;
};

} // namespace

/// Checks a sequence configuration; returns the problem, or "" when none.
static std::string checkConfig(const metart_sequence_config &config) {
  if (config.vocab < 2 || config.vocab > kMaxVocab)
    return "vocab (" + std::to_string(config.vocab) +
           ") must be between 2 and " + std::to_string(kMaxVocab);
  if (config.length < 2)
    return "length (" + std::to_string(config.length) + ") must be at least 2";
  if (config.support < 0 || config.query < 0)
    return "support (" + std::to_string(config.support) + ") and query (" +
           std::to_string(config.query) + ") must not be negative";
  return {};
}

metart_status metart_tasks_create_sequence(const metart_sequence_config *config,
                                           uint64_t seed,
                                           metart_tasks **out_tasks) {
  const char *function = "metart_tasks_create_sequence";
  auto fail = [&](std::string message) {
    setTasksError(nullptr, std::string(function) + ": " + std::move(message));
    return METART_ERROR_INVALID_ARGUMENT;
  };
  if (!out_tasks)
    return fail("out_tasks is null");
  *out_tasks = nullptr;
  if (!config)
    return fail("config is null");
  if (std::string problem = checkConfig(*config); !problem.empty())
    return fail(std::move(problem));
  return createTasks<Sequence>(function, out_tasks, *config, seed);
}
