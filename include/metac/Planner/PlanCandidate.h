//===- PlanCandidate.h - one plan the planner considers ---------*- C++ -*-===//
//
// A mesh (with, for pipelines, its micro-batches and schedule) and what the
// planner found of it: the estimate, whether it was costed exactly or only
// screened, and why it was set aside. Apart from Planner.h so that the
// screening (lib/Planner/Screening.h) needs no more than this.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_PLANNER_PLANCANDIDATE_H
#define METAC_PLANNER_PLANCANDIDATE_H

#include "metac/Partition/Mesh.h"
#include "metac/Planner/CostModel.h"

#include <cstdint>
#include <string>

namespace metac::planner {

struct PlanCandidate {
  partition::MeshShape mesh;
  /// Pipelines only: tasks per micro-batch group count, and the schedule.
  int64_t microBatches = 1;
  std::string schedule;
  /// A mixed meta-batch on a task axis: its split, cost or count.
  std::string balance;
  /// State the plan keeps in host memory (`--offload`), when the planner
  /// chose it to fit; empty: the request's.
  std::string offload;
  IterationEstimate estimate;
  /// Why the plan was set aside (empty when it fits).
  std::string rejection;
  /// Costed on its partitioned program (else only screened).
  bool exact = true;

  /// What `--mesh` takes (and, for pipelines, the micro-batches and
  /// schedule that go with it).
  std::string meshString() const { return mesh.str(); }
  std::string describe() const;
};

} // namespace metac::planner

#endif // METAC_PLANNER_PLANCANDIDATE_H
