//===- Episodes.cpp - fixed episodes from a safetensors file --------------===//
//
// A file holds N episodes as four tensors with a leading episode axis and a
// sample axis: `support.x` [N, S, input...], `support.y` [N, S, target...],
// `query.x` [N, Q, input...], `query.y` [N, Q, target...]; inputs are F32,
// F64, I32 or I64 (token ids), targets F32, F64, I32 or I64 (labels).
//
// Which episode a draw takes: task i of draw t is episode
//   eval split:  i mod N
//   train split: (offset(t) + i) mod N,  offset(t) = floor(N * frac(t / phi))
// with phi the golden ratio, computed exactly in integers as the high 64
// bits of N * (t * 0x9E3779B97F4A7C15 mod 2^64). So a meta-batch is a run
// of consecutive episodes (all distinct when it is no longer than N), the
// evaluation always sees the same ones, and the runs of successive training
// iterations start at offsets spread evenly over the file (a Weyl sequence:
// consecutive iterations barely overlap, every episode is used, iteration 0
// starts at episode 0), whatever N and the meta-batch size. In Python:
//   ((t * 0x9E3779B97F4A7C15) % 2**64 * N) >> 64.
//
//===----------------------------------------------------------------------===//

#include "data/Random.h"
#include "data/Tasks.h"
#include "io/Safetensors.h"

#include <array>
#include <cstring>
#include <sstream>

using namespace metart::data;
using namespace metart::io;

/// The high 64 bits of the 128-bit product of `a` and `b`.
static uint64_t multiplyHigh(uint64_t a, uint64_t b) {
  uint64_t aLow = a & 0xFFFFFFFFu, aHigh = a >> 32;
  uint64_t bLow = b & 0xFFFFFFFFu, bHigh = b >> 32;
  uint64_t lowHigh = aLow * bHigh, highLow = aHigh * bLow;
  uint64_t middle = ((aLow * bLow) >> 32) + (lowHigh & 0xFFFFFFFFu) + highLow;
  return aHigh * bHigh + (lowHigh >> 32) + (middle >> 32);
}

namespace {

/// The four tensors of a file, in the order of the draw's buffers.
constexpr std::array<const char *, 4> kNames = {"support.x", "support.y",
                                                "query.x", "query.y"};

/// One of the four tensors: where episode 0 starts and each episode's size.
struct Part {
  const char *data;
  size_t bytesPerEpisode;
};

class Episodes : public TaskSource {
public:
  Episodes(TaskLayout layout, std::unique_ptr<metart_safetensors> file,
           std::array<Part, 4> parts, int64_t episodes)
      : TaskSource(std::move(layout)), file(std::move(file)), parts(parts),
        episodes(static_cast<uint64_t>(episodes)) {}

  void draw(metart_split split, int64_t iteration, int64_t first, int64_t count,
            const DrawBuffers &buffers) const override {
    std::array<void *, 4> outputs = {buffers.supportInputs,
                                     buffers.supportTargets,
                                     buffers.queryInputs, buffers.queryTargets};
    uint64_t offset = 0;
    if (split == METART_SPLIT_TRAIN)
      offset = multiplyHigh(episodes,
                            static_cast<uint64_t>(iteration) * kGoldenGamma);
    for (int64_t k = 0; k < count; ++k) {
      uint64_t episode =
          (offset + static_cast<uint64_t>(first + k) % episodes) % episodes;
      for (size_t p = 0; p < parts.size(); ++p) {
        size_t bytes = parts[p].bytesPerEpisode;
        if (bytes > 0)
          std::memcpy(static_cast<char *>(outputs[p]) + k * bytes,
                      parts[p].data + episode * bytes, bytes);
      }
    }
  }

private:
  std::unique_ptr<metart_safetensors> file;
  std::array<Part, 4> parts;
  uint64_t episodes;
};

} // namespace

/// Prints `[a, b, ...]`.
static std::string printShape(const std::vector<int64_t> &shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

/// The sample type of tensor [episodes, samples, sample shape...].
static SampleType sampleTypeOf(const SafetensorsTensor &tensor) {
  return {tensor.dtype,
          std::vector<int64_t>(tensor.shape.begin() + 2, tensor.shape.end())};
}

/// Checks that the four tensors of `file` make episodes and fills `layout`,
/// `parts` and `episodes`; returns the problem, or "" when none.
static std::string checkEpisodes(const metart_safetensors &file,
                                 TaskLayout &layout, std::array<Part, 4> &parts,
                                 int64_t &episodes) {
  std::array<const SafetensorsTensor *, 4> tensors;
  for (size_t p = 0; p < kNames.size(); ++p) {
    auto it = file.tensors.find(std::string_view(kNames[p]));
    if (it == file.tensors.end())
      return std::string("no tensor \"") + kNames[p] +
             "\" (fixed episodes are support.x, support.y, query.x and "
             "query.y)";
    tensors[p] = &it->second;
    if (it->second.shape.size() < 2)
      return std::string(kNames[p]) + " has shape " +
             printShape(it->second.shape) +
             ", not [episodes, samples, sample shape...]";
  }
  auto describe = [&](size_t p) {
    return std::string(kNames[p]) + " " + printShape(tensors[p]->shape) + " " +
           safetensorsDtypeName(tensors[p]->dtype);
  };
  episodes = tensors[0]->shape[0];
  for (size_t p = 1; p < 4; ++p)
    if (tensors[p]->shape[0] != episodes)
      return "the tensors disagree on the number of episodes: " + describe(0) +
             ", " + describe(p);
  if (episodes == 0)
    return "the file has no episodes: " + describe(0);
  for (size_t p : {0, 2})
    if (tensors[p]->shape[1] != tensors[p + 1]->shape[1])
      return "the inputs and targets disagree on the number of samples: " +
             describe(p) + ", " + describe(p + 1);
  for (size_t p : {0, 1}) {
    SampleType support = sampleTypeOf(*tensors[p]);
    SampleType query = sampleTypeOf(*tensors[p + 2]);
    if (support.dtype != query.dtype || support.shape != query.shape)
      return "support and query samples differ: " + describe(p) + ", " +
             describe(p + 2);
  }

  layout = {sampleTypeOf(*tensors[0]), sampleTypeOf(*tensors[1]),
            tensors[0]->shape[1], tensors[2]->shape[1]};
  for (size_t p = 0; p < 4; ++p) {
    const SampleType &type = p % 2 == 0 ? layout.inputs : layout.targets;
    int64_t samples = p < 2 ? layout.support : layout.query;
    parts[p] = {static_cast<const char *>(tensors[p]->data),
                static_cast<size_t>(samples * type.elements()) *
                    dtypeBytes(type.dtype)};
  }
  return {};
}

metart_status metart_tasks_create_episodes(const char *path,
                                           metart_tasks **out_tasks) {
  const char *function = "metart_tasks_create_episodes";
  auto fail = [&](metart_status status, std::string message) {
    setTasksError(nullptr, std::string(function) + ": " + std::move(message));
    return status;
  };
  if (!out_tasks)
    return fail(METART_ERROR_INVALID_ARGUMENT, "out_tasks is null");
  *out_tasks = nullptr;
  if (!path)
    return fail(METART_ERROR_INVALID_ARGUMENT, "path is null");
  std::unique_ptr<metart_safetensors> file;
  std::string error;
  if (metart_status status = openSafetensors(path, file, error))
    return fail(status, std::move(error));
  TaskLayout layout;
  std::array<Part, 4> parts;
  int64_t episodes = 0;
  if (std::string problem = checkEpisodes(*file, layout, parts, episodes);
      !problem.empty())
    return fail(METART_ERROR_INVALID_ARGUMENT,
                std::string(path) + ": " + std::move(problem));
  return createTasks<Episodes>(function, out_tasks, std::move(layout),
                               std::move(file), parts, episodes);
}
