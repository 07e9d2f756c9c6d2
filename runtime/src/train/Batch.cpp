//===- Batch.cpp - this rank's part of each drawn meta-batch --------------===//
//
// The trainer's batch buffers: allocated once for this rank's shares of
// the meta-batch (its tasks, samples and positions), refilled every
// meta-iteration from the draw a single process would make.
//
//===----------------------------------------------------------------------===//

#include "Trainer.h"

namespace metart::train {

metart_status Trainer::allocateBatch(const std::vector<TaskShare> &shares,
                                     std::vector<DeviceTensor> &out,
                                     std::vector<std::vector<char>> &host,
                                     std::vector<std::vector<char>> &local) {
  out.assign(4 * shares.size(), DeviceTensor());
  host.assign(out.size(), {});
  local.assign(out.size(), {});
  for (size_t k = 0; k < shares.size(); ++k) {
    metart_tasks *tasks = shares[k].tasks;
    int64_t support = 0, query = 0;
    metart_tasks_sizes(tasks, &support, &query);
    if (support % sharding.dataParts || query % sharding.dataParts)
      return fail(METART_ERROR_INVALID_ARGUMENT,
                  "support and query sets of %lld and %lld samples do not "
                  "split over %lld ranks of the data axis",
                  static_cast<long long>(support),
                  static_cast<long long>(query),
                  static_cast<long long>(sharding.dataParts));
    for (int i = 0; i < 4; ++i) {
      int32_t dtype = 0, rank = 0;
      const int64_t *sample = nullptr;
      if (metart_status s =
              metart_tasks_sample_type(tasks, i % 2, &dtype, &rank, &sample))
        return fail(s, "cannot read the task distribution's sample types");
      int64_t samples = i < 2 ? support : query;
      std::vector<int64_t> shape = {shares[k].count,
                                    sharding.localSamples(samples)};
      shape.insert(shape.end(), sample, sample + rank);
      // The sequence axis splits a sample's positions (its first dimension).
      if (sharding.sequenceParts > 1) {
        if (rank < 1 || shape[2] % sharding.sequenceParts)
          return fail(METART_ERROR_INVALID_ARGUMENT,
                      "samples of %lld positions do not split over %lld "
                      "ranks of the sequence axis",
                      static_cast<long long>(rank < 1 ? 1 : shape[2]),
                      static_cast<long long>(sharding.sequenceParts));
        shape[2] /= sharding.sequenceParts;
      }
      size_t at = 4 * k + i;
      if (metart_status s = allocate(out[at], shape, dtype))
        return s;
      local[at].resize(out[at].bytes);
      host[at].resize(out[at].bytes * sharding.dataParts *
                      sharding.sequenceParts);
    }
  }
  return METART_OK;
}

metart_status Trainer::drawBatch(const std::vector<TaskShare> &shares,
                                 metart_split split, int64_t iteration,
                                 int64_t first, std::vector<DeviceTensor> &out,
                                 std::vector<std::vector<char>> &host,
                                 std::vector<std::vector<char>> &local) {
  // This rank's tasks of the global draw, whole; then its samples of each.
  for (size_t k = 0; k < shares.size(); ++k) {
    const TaskShare &share = shares[k];
    std::vector<char> *h = &host[4 * k];
    if (metart_status s = metart_tasks_draw(
            share.tasks, split, iteration, first + share.first, share.count,
            h[0].data(), h[1].data(), h[2].data(), h[3].data()))
      return fail(s, "drawing tasks of iteration %lld failed: %s",
                  static_cast<long long>(iteration),
                  metart_tasks_last_error(share.tasks));
    for (size_t i = 4 * k; i < 4 * k + 4; ++i) {
      const char *mine = host[i].data();
      if ((sharding.dataParts > 1 || sharding.sequenceParts > 1) &&
          out[i].bytes) {
        int64_t samplesHere = out[i].shape[1];
        // A sample's rows: its positions on a sequence axis, else itself.
        int64_t rowsHere =
            sharding.sequenceParts > 1 ? out[i].shape[2] : int64_t(1);
        size_t rowBytes = out[i].bytes / (share.count * samplesHere * rowsHere);
        sharding.slice(host[i].data(), local[i].data(), share.count,
                       samplesHere * sharding.dataParts,
                       rowsHere * sharding.sequenceParts, rowBytes);
        mine = local[i].data();
      }
      if (metart_status s = metart_copy_to_device(
              context, out[i].descriptor.data, mine, out[i].bytes))
        return fail(s, "%s", metart_context_last_error(context));
    }
  }
  return METART_OK;
}

} // namespace metart::train
