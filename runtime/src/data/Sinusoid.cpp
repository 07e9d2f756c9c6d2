//===- Sinusoid.cpp - the MAML paper's sinusoid regression ----------------===//
//
// Task i of draw `iteration` of `split` is y = A sin(x - phase) with A and
// phase uniform in their ranges; its support inputs and its query inputs
// are uniform in the input range, drawn independently. Everything comes
// from generators seeded by a hash of (seed, split, iteration, i), one
// stream for the task's parameters and one for each set, so a task never
// depends on which other tasks are drawn with it, nor its query samples on
// the support size. Values are computed in double and rounded once to the
// buffer's type: the f32 draw is the f64 draw rounded.
//
//===----------------------------------------------------------------------===//

#include "data/Random.h"
#include "data/Tasks.h"

#include <cmath>
#include <cstdio>

using namespace metart::data;

namespace {

/// Which stream of a task a generator draws.
enum class Stream : uint64_t { Parameters = 0, Support = 1, Query = 2 };

class Sinusoid : public TaskSource {
public:
  Sinusoid(const metart_sinusoid_config &config, uint64_t seed)
      : TaskSource({{config.dtype, {1}},
                    {config.dtype, {1}},
                    config.support,
                    config.query}),
        config(config), seed(seed) {}

  void draw(metart_split split, int64_t iteration, int64_t first, int64_t count,
            const DrawBuffers &buffers) const override {
    if (config.dtype == METART_F32)
      drawAs<float>(split, iteration, first, count, buffers);
    else
      drawAs<double>(split, iteration, first, count, buffers);
  }

private:
  /// The generator of `stream` of task `index`.
  SplitMix64 generator(metart_split split, int64_t iteration, int64_t index,
                       Stream stream) const {
    return SplitMix64(hashWords(
        {seed, static_cast<uint64_t>(split), static_cast<uint64_t>(iteration),
         static_cast<uint64_t>(index), static_cast<uint64_t>(stream)}));
  }

  /// Writes `samples` samples of a task with `amplitude` and `phase` from
  /// `random` to `x` and `y`.
  template <typename T>
  void drawSet(SplitMix64 random, double amplitude, double phase,
               int64_t samples, T *x, T *y) const {
    for (int64_t j = 0; j < samples; ++j) {
      double input = random.uniform(config.input[0], config.input[1]);
      x[j] = static_cast<T>(input);
      y[j] = static_cast<T>(amplitude * std::sin(input - phase));
    }
  }

  template <typename T>
  void drawAs(metart_split split, int64_t iteration, int64_t first,
              int64_t count, const DrawBuffers &buffers) const {
    const int64_t support = config.support, query = config.query;
    for (int64_t k = 0; k < count; ++k) {
      int64_t index = first + k;
      SplitMix64 parameters =
          generator(split, iteration, index, Stream::Parameters);
      double amplitude =
          parameters.uniform(config.amplitude[0], config.amplitude[1]);
      double phase = parameters.uniform(config.phase[0], config.phase[1]);
      drawSet(generator(split, iteration, index, Stream::Support), amplitude,
              phase, support,
              static_cast<T *>(buffers.supportInputs) + k * support,
              static_cast<T *>(buffers.supportTargets) + k * support);
      drawSet(generator(split, iteration, index, Stream::Query), amplitude,
              phase, query, static_cast<T *>(buffers.queryInputs) + k * query,
              static_cast<T *>(buffers.queryTargets) + k * query);
    }
  }

  metart_sinusoid_config config;
  uint64_t seed;
};

} // namespace

/// Prints `value` as `%g` does.
static std::string formatDouble(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// Checks a sinusoid configuration; returns the problem, or "" when none.
static std::string checkConfig(const metart_sinusoid_config &config) {
  for (auto [range, name] :
       {std::pair(config.amplitude, "amplitude"),
        std::pair(config.phase, "phase"), std::pair(config.input, "input")})
    if (!std::isfinite(range[0]) || !std::isfinite(range[1]) ||
        range[0] > range[1])
      return std::string(name) + " range [" + formatDouble(range[0]) + ", " +
             formatDouble(range[1]) + "] is not finite with low <= high";
  if (config.support < 0 || config.query < 0)
    return "support (" + std::to_string(config.support) + ") and query (" +
           std::to_string(config.query) + ") must not be negative";
  if (config.dtype != METART_F32 && config.dtype != METART_F64)
    return "dtype " + std::to_string(config.dtype) +
           " is not METART_F32 or METART_F64";
  return {};
}

metart_status metart_tasks_create_sinusoid(const metart_sinusoid_config *config,
                                           uint64_t seed,
                                           metart_tasks **out_tasks) {
  const char *function = "metart_tasks_create_sinusoid";
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
  return createTasks<Sinusoid>(function, out_tasks, *config, seed);
}
