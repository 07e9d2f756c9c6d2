//===- Trainer.h - the meta-training driver's state -------------*- C++ -*-===//
//
// The driver behind metart_train (Train.cpp: the iteration loop, progress,
// evaluation; Checkpoint.cpp: parameters and state to and from files).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_TRAIN_TRAINER_H
#define METART_SRC_TRAIN_TRAINER_H

#include "Health.h"
#include "LossScaler.h"
#include "Sharding.h"
#include "metart/train.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace metart::train {

/// The peak resident memory of this process so far (Linux reports
/// kilobytes).
inline size_t peakHostBytes() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<size_t>(usage.ru_maxrss) * 1024;
}

inline size_t elementSize(int32_t dtype) {
  return dtype == METART_F32 || dtype == METART_I32 ? 4 : 8;
}

/// A tensor in device memory with its descriptor.
struct DeviceTensor {
  std::vector<int64_t> shape;
  int32_t dtype = METART_F32;
  size_t bytes = 0;
  metart_tensor descriptor{};

  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

/// A batch this rank computes: `count` tasks from `first` (an index into
/// the meta-batch) drawn from `tasks`.
struct TaskShare {
  metart_tasks *tasks = nullptr;
  int64_t first = 0, count = 0;
};

/// Buffers of whole tensors gathered for a file, freed when it is written.
struct GatheredTensors {
  metart_context *context;
  std::deque<DeviceTensor> tensors;
  explicit GatheredTensors(metart_context *context) : context(context) {}
  GatheredTensors(const GatheredTensors &) = delete;
  GatheredTensors &operator=(const GatheredTensors &) = delete;
  ~GatheredTensors() {
    for (DeviceTensor &t : tensors)
      if (t.descriptor.data)
        metart_buffer_free(context, t.descriptor.data);
  }
};

class Trainer {
public:
  Trainer(metart_context *context, const metart_program &program,
          const metart_train_options &options, char *error, size_t errorSize)
      : context(context), program(program), options(options), error(error),
        errorSize(errorSize) {}

  metart_status run(metart_train_result &result);

private:
  metart_status fail(metart_status status, const char *format, ...);
  /// A buffer of the context's memory or, with `host`, a host buffer
  /// (offloaded state, or the servers' state on the first worker).
  metart_status allocate(DeviceTensor &t, std::vector<int64_t> shape,
                         int32_t dtype, bool host = false);
  metart_status initialize();
  metart_status initializeParams();
  /// With `missing`, a parameter the file lacks is listed there rather
  /// than an error.
  metart_status loadParams(const char *path, bool withState, int64_t *iteration,
                           std::vector<std::string> *missing = nullptr);
  metart_status saveParams(const char *path, bool withState, int64_t iteration);
  /// The whole of tensor `t`, held in parts or by one pipeline stage,
  /// gathered into `whole` (a buffer it allocates; a collective of the
  /// part's group, then of the pipeline).
  metart_status gatherWhole(size_t t, DeviceTensor &whole);
  /// Writes the checkpoint of `iteration` into the checkpoint directory in
  /// the run's format (ShardedCheckpoint.cpp) and waits for every rank.
  metart_status saveCheckpoint(int64_t iteration);
  bool shardedCheckpoints() const;
  /// Writes this rank's pieces (and, rank 0, the index and the pointer);
  /// `where` is the checkpoint's directory.
  metart_status saveSharded(int64_t iteration, std::string &where);
  metart_status loadSharded(const std::string &dir, int64_t *iteration);
  /// Resumes from the later of `dir`'s gathered and sharded checkpoints.
  metart_status resume(const char *dir, int64_t *iteration);
  /// This rank's shares of the training meta-batch and its step: its
  /// slice of the one distribution's, or its group's of each class of a
  /// mixed meta-batch.
  metart_status assignShares();
  /// Four tensors (support and query inputs and targets) per share.
  metart_status allocateBatch(const std::vector<TaskShare> &shares,
                              std::vector<DeviceTensor> &batch,
                              std::vector<std::vector<char>> &host,
                              std::vector<std::vector<char>> &local);
  /// Draws each share's tasks of `iteration`, `first` tasks further on.
  metart_status drawBatch(const std::vector<TaskShare> &shares,
                          metart_split split, int64_t iteration, int64_t first,
                          std::vector<DeviceTensor> &batch,
                          std::vector<std::vector<char>> &host,
                          std::vector<std::vector<char>> &local);
  /// Waits for every rank (after rank 0 wrote a file).
  metart_status barrier();
  /// The largest rank's peak device memory so far.
  metart_status trainingPeak(size_t &peak);
  /// `value` reduced over every rank by `op` (itself on one rank).
  metart_status reduceOverRanks(double &value, int32_t op);
  metart_status evaluate(const metart_eval_spec &spec,
                         metart_eval_result &result);
  void progress(int64_t iteration, int64_t total, double loss,
                double secondsPerIteration);
  /// The error of a non-finite meta-iteration `iteration` (1-based) under
  /// `stop`: the meta-loss and the first non-finite parameter or gradient.
  metart_status stopNonfinite(int64_t iteration, double loss, const char *why);
  /// Whether a stop was requested (SIGTERM, SIGINT) on any rank: the
  /// ranks agree at the end of every meta-iteration (Preempt.cpp).
  metart_status agreePreemption(int &signal);
  /// Writes the checkpoint of meta-iteration `iteration` (unless it was
  /// just written) and returns METART_PREEMPTED with what to resume.
  metart_status stopPreempted(int64_t iteration, int signal);
  int32_t policy() const;
  std::string stateName(size_t k) const;
  /// How tensor `t` of the parameters and the optimizer state (parameters
  /// first) is held: whole (`parts` 1), or as this rank's part of `parts`
  /// equal parts of dimension `dim`, one per rank of the group of the axes
  /// in `mask`: a parameter kept split between steps and its state; ZeRO's
  /// state parts are stretches of the flattened whole (`flat`). Under
  /// pipeline stages, `stage` >= 0: only that stage's ranks hold it (the
  /// others an empty tensor).
  struct Holding {
    int64_t parts = 1;
    int32_t mask = 0;
    int32_t dim = 0;
    bool flat = false;
    int32_t stage = -1;
  };
  Holding holdingOf(size_t t) const;
  /// gatherWhole's all-gather of the parts of `holding` on this rank's
  /// stage.
  metart_status gatherParts(size_t t, const Holding &holding,
                            DeviceTensor &whole);
  bool isPart(size_t t) const { return holdingOf(t).parts > 1; }
  /// Whether this rank holds (a part of) tensor `t`.
  bool heldHere(size_t t) const {
    int32_t stage = holdingOf(t).stage;
    return stage < 0 || stage == sharding.pipelineCoord;
  }
  /// Whether files need tensor `t` gathered from other ranks.
  bool heldElsewhere(size_t t) const {
    return isPart(t) || holdingOf(t).stage >= 0;
  }
  /// The whole of tensor `t`, described (it has no buffer).
  DeviceTensor wholeOf(size_t t) const;
  /// Tensor `t`'s buffer on this rank (a part or the whole).
  DeviceTensor &held(size_t t) {
    return t < params.size() ? params[t] : state[t - params.size()];
  }
  /// Elements of a part.
  int64_t partElements(size_t t) const {
    return heldHere(t) ? wholeOf(t).numElements() / holdingOf(t).parts : 0;
  }
  /// The stretches of the flattened whole (first element, count) that make
  /// up this rank's part of tensor `t`, in order (the whole: one stretch).
  metart_status partRanges(size_t t,
                           std::vector<std::pair<int64_t, int64_t>> &ranges);
  /// Whether a part of tensor `t` is one stretch of its flattened whole.
  bool contiguousPart(size_t t) const;
  /// The name tensor `t` has in files.
  std::string tensorName(size_t t) const {
    return t < static_cast<size_t>(program.num_params)
               ? std::string(program.params[t].name)
               : stateName(t - program.num_params);
  }

  metart_context *context;
  const metart_program &program;
  const metart_train_options &options;
  char *error;
  size_t errorSize;
  std::vector<DeviceTensor> params, state, batch;
  std::vector<TaskShare> shares;
  metart_function step = nullptr;
  /// Whole drawn tasks (`hostBatch`) and this rank's samples of them.
  std::vector<std::vector<char>> hostBatch, localBatch;
  DeviceTensor loss;
  /// The update guard's verdicts (when `program.guarded`).
  metart::train::UpdateHealth health;
  /// Dynamic loss scaling (when `program.loss_scaling`): the scale and the
  /// step's scalar input that holds it.
  metart::train::LossScaler scaler;
  DeviceTensor scaleInput;
  metart_status writeScale();
  /// The last checkpoint written or resumed from, its directory and its
  /// iteration (-1: none).
  std::string lastCheckpoint, lastCheckpointDir;
  int64_t lastCheckpointIteration = -1;
  /// Checkpoints written and the wall time they took (every rank waiting
  /// for the last), and the time resuming took: the metrics' summary.
  int64_t checkpointWrites = 0;
  double checkpointSeconds = 0, resumeSeconds = 0;
  metart::train::Sharding sharding;
  /// One f64 for the ranks' agreement on a stop (several ranks only).
  DeviceTensor preemptFlag;
  std::chrono::steady_clock::time_point lastDraw{};
};

} // namespace metart::train

#endif // METART_SRC_TRAIN_TRAINER_H
