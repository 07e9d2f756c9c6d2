//===- Sharding.h - this rank's slice of each meta-batch --------*- C++ -*-===//
//
// With a mesh, every rank draws the meta-batch a single process would and
// keeps its slice: the tasks of its task coordinate and, of each task, the
// samples of its data coordinate and, of each sample, the positions of its
// sequence coordinate (a sample's first dimension). Tasks are drawn whole (a
// task's samples come from one generator stream) and then sliced, so the union
// over the ranks is exactly the single-process batch.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_TRAIN_SHARDING_H
#define METART_SRC_TRAIN_SHARDING_H

#include "metart/train.h"

#include <string>

namespace metart::train {

struct Sharding {
  int64_t taskParts = 1, dataParts = 1, sequenceParts = 1;
  int64_t taskCoord = 0, dataCoord = 0, sequenceCoord = 0, pipelineCoord = 0;
  /// Whether this rank prints and writes files (world rank 0).
  bool writer = true;

  /// Attaches a communicator for the program's mesh to `context` when it
  /// has none, and checks that the meta-batch and the sample counts split
  /// evenly; `error` says why not.
  metart_status layOut(metart_context *context, const metart_program &program,
                       std::string &error);
  int64_t localTasks(int64_t tasks) const { return tasks / taskParts; }
  /// The first task of this rank in a draw of `tasks`.
  int64_t firstTask(int64_t tasks) const {
    return taskCoord * localTasks(tasks);
  }
  int64_t localSamples(int64_t samples) const { return samples / dataParts; }
  /// Copies this rank's part of `tasks` drawn tasks of `samples` samples,
  /// each `positions` rows of `rowBytes`, from `drawn` to `local`: its
  /// samples and, of each, its positions.
  void slice(const char *drawn, char *local, int64_t tasks, int64_t samples,
             int64_t positions, size_t rowBytes) const;
};

/// The counters of `context` as a JSON object with one member per axes
/// mask that had calls: {"task": {"bytes": B, "seconds": S, "calls": C}}.
std::string commJson(const metart_comm_stats *perMask);

} // namespace metart::train

#endif // METART_SRC_TRAIN_SHARDING_H
