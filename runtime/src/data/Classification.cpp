//===- Classification.cpp - the episodic draw over classes of images ------===//
//
// Task i of draw `iteration` of `split`: a partial Fisher-Yates shuffle of
// the allowed classes from the stream (seed, split, iteration, i, 0) picks
// `ways` of them, the c-th getting label c; the c-th class's shots + query
// images are a uniform sample without replacement from the stream (seed,
// split, iteration, i, 1 + c), the first `shots` for the support set.
//
//===----------------------------------------------------------------------===//

#include "data/Classification.h"

#include "data/Random.h"

#include <unordered_map>
#include <utility>

using namespace metart::data;

/// Writes `out.size()` distinct values of [0, n), uniformly, from
/// `random`: the first out.size() steps of a Fisher-Yates shuffle of
/// [0, n), with the positions it moved in a map rather than all n values.
static void sampleDistinct(SplitMix64 random, uint64_t n,
                           std::vector<uint64_t> &out) {
  std::unordered_map<uint64_t, uint64_t> moved;
  auto at = [&](uint64_t position) {
    auto it = moved.find(position);
    return it == moved.end() ? position : it->second;
  };
  for (uint64_t i = 0; i < out.size(); ++i) {
    uint64_t j = i + random.below(n - i);
    out[i] = at(j);
    moved[j] = at(i);
  }
}

std::string metart::data::checkShotsAndQuery(int64_t shots, int64_t query) {
  constexpr int64_t kMax = int64_t(1) << 24;
  if (shots < 1 || shots > kMax || query < 0 || query > kMax)
    return "shots (" + std::to_string(shots) + ") must be between 1 and " +
           std::to_string(kMax) + ", query (" + std::to_string(query) +
           ") between 0 and " + std::to_string(kMax);
  return {};
}

ClassificationTasks::ClassificationTasks(EpisodeShape shape, int32_t dtype,
                                         uint64_t seed,
                                         std::shared_ptr<const ImageSet> train,
                                         std::shared_ptr<const ImageSet> eval,
                                         std::vector<uint32_t> allowed)
    : TaskSource({{dtype, {1, train->side(), train->side()}},
                  {METART_I64, {}},
                  shape.ways * shape.shots,
                  shape.ways * shape.query}),
      shape(shape), dtype(dtype), seed(seed), train(std::move(train)),
      eval(std::move(eval)), allowed(std::move(allowed)) {}

void ClassificationTasks::draw(metart_split split, int64_t iteration,
                               int64_t first, int64_t count,
                               const DrawBuffers &buffers) const {
  if (dtype == METART_F32)
    drawAs<float>(split, iteration, first, count, buffers);
  else
    drawAs<double>(split, iteration, first, count, buffers);
}

template <typename T>
void ClassificationTasks::drawAs(metart_split split, int64_t iteration,
                                 int64_t first, int64_t count,
                                 const DrawBuffers &buffers) const {
  const ImageSet &images = split == METART_SPLIT_TRAIN ? *train : *eval;
  const int64_t ways = shape.ways, shots = shape.shots, query = shape.query;
  const int64_t support = ways * shots, queries = ways * query;
  const int64_t pixels = images.pixels();
  auto generator = [&](int64_t index, uint64_t stream) {
    return SplitMix64(hashWords({seed, static_cast<uint64_t>(split),
                                 static_cast<uint64_t>(iteration),
                                 static_cast<uint64_t>(index), stream}));
  };
  auto *supportX = static_cast<T *>(buffers.supportInputs);
  auto *supportY = static_cast<int64_t *>(buffers.supportTargets);
  auto *queryX = static_cast<T *>(buffers.queryInputs);
  auto *queryY = static_cast<int64_t *>(buffers.queryTargets);
  std::vector<uint32_t> classes;
  std::vector<uint64_t> picked(static_cast<size_t>(shots + query));
  for (int64_t k = 0; k < count; ++k) {
    const int64_t index = first + k;
    classes = allowed;
    SplitMix64 classRandom = generator(index, 0);
    for (size_t c = 0; c < static_cast<size_t>(ways); ++c)
      std::swap(classes[c], classes[c + classRandom.below(classes.size() - c)]);
    for (int64_t c = 0; c < ways; ++c) {
      const std::vector<uint32_t> &ids = images.imagesOf(classes[c]);
      sampleDistinct(generator(index, 1 + static_cast<uint64_t>(c)), ids.size(),
                     picked);
      for (int64_t s = 0; s < shots; ++s) {
        int64_t j = k * support + c * shots + s;
        images.write(ids[picked[s]], supportX + j * pixels);
        supportY[j] = c;
      }
      for (int64_t q = 0; q < query; ++q) {
        int64_t j = k * queries + c * query + q;
        images.write(ids[picked[shots + q]], queryX + j * pixels);
        queryY[j] = c;
      }
    }
  }
}
