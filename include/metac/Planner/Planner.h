//===- Planner.h - choose a parallel plan for a cluster ---------*- C++ -*-===//
//
// The planner (ARCHITECTURE §5): for a training compiled to the autodiff
// phase, it enumerates the plans of a device count (factorisations over
// task, data, tensor, pipeline and expert; micro-batch counts and schedules for
// pipelines; the tensor axis inside a node), partitions a copy of the
// program for each with metac's own passes, costs the partitioned program
// with the cost model (CostModel.h), rejects plans whose peak memory does
// not fit a device with the stated margin, and ranks the rest by predicted
// time per meta-iteration.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_PLANNER_PLANNER_H
#define METAC_PLANNER_PLANNER_H

#include "metac/Partition/Mesh.h"
#include "metac/Planner/ClusterDescription.h"
#include "metac/Planner/CostModel.h"
#include "metac/Planner/PlanCandidate.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace metac::planner {

struct PlannerOptions {
  /// Devices to plan for (0: every device of the cluster).
  int64_t devices = 0;
  /// A plan fits when its predicted peak is at most (1 - margin) of a
  /// device's memory: the model's own error and what it does not see
  /// (library workspaces, fragmentation).
  double memoryMargin = 0.10;
  /// Bucket size of the optimized phase's merged all-reduces (bytes).
  int64_t bucketBytes = 25 << 20;
  /// All-reduce algorithm of the plans (PipelineOptions::allReduce).
  std::string allReduce;
  /// Wire type of gradient all-reduces (PipelineOptions::compress).
  std::string compress;
  /// Overlapped gradient all-reduces (PipelineOptions::overlap).
  std::string overlap;
  /// ZeRO stage of the plans' optimizer state (PipelineOptions::zero).
  int64_t zero = 0;
  /// Parameters the partitioner splits kept split between steps
  /// (PipelineOptions::splitParams).
  bool splitParams = true;
  /// Parameter servers and their pacing (PipelineOptions::parameterServers,
  /// staleness, asynchronous).
  int64_t parameterServers = -1;
  int64_t staleness = -1;
  bool asynchronous = false;
  /// Offloaded state (PipelineOptions::offload).
  std::string offload;
  /// With `offload` empty and no plan fitting: try the closest plans again
  /// with state in host memory (`optimizer`, `params`, `all`).
  bool offloadToFit = true;
  /// How a mixed meta-batch splits over the task axis (`--balance`).
  std::string balance;
  /// Up to this many plans, every plan is partitioned and costed exactly;
  /// beyond, plans are screened (Screening.h) and the best `finalists`
  /// that fit are costed exactly.
  int64_t exactLimit = 64;
  int64_t finalists = 4;
  /// Cost only this plan (`metac plan --mesh=...`): a hand plan beside the
  /// planner's.
  std::optional<PlanCandidate> only;
};

struct PlanResult {
  int64_t devices = 0;
  /// Plans that fit, fastest first; then those set aside, with reasons;
  /// then those only screened, by their coarse estimate.
  std::vector<PlanCandidate> ranked, rejected, screened;
  /// Wall-clock seconds the search took.
  double planningSeconds = 0;
};

/// Plans training `train` of `module` (at the autodiff phase; left
/// unchanged) for `cluster`. Fails when no plan fits, naming the smallest
/// memory per device the best plan would need.
llvm::Expected<PlanResult> planTraining(mlir::ModuleOp module,
                                        llvm::StringRef train,
                                        const ClusterDescription &cluster,
                                        const PlannerOptions &options);

} // namespace metac::planner

#endif // METAC_PLANNER_PLANNER_H
