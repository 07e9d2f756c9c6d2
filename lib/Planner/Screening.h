//===- Screening.h - a coarse cost for plans not partitioned ----*- C++ -*-===//
//
// When a device count has more plans than the planner partitions (pipelines
// multiply them: stages, micro-batches, schedules), each plan is first
// screened: its cost is composed from exact estimates of a few reference
// plans (one device; two-way task, data, tensor, pipeline and expert splits),
// which say what fraction of the work, memory and communication each axis
// divides and what collectives it adds. The best screened plans are then
// partitioned and costed exactly.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_PLANNER_SCREENING_H
#define METAC_LIB_PLANNER_SCREENING_H

#include "metac/Planner/ClusterDescription.h"
#include "metac/Planner/CostModel.h"
#include "metac/Planner/PlanCandidate.h"

#include <array>
#include <optional>

namespace metac::planner {

struct ScreeningReferences {
  /// The plan on one device.
  IterationEstimate single;
  /// Per mesh axis, a plan that splits only that axis `size` ways (for the
  /// pipeline: `size` stages of as many micro-batches, GPipe), if it
  /// partitions.
  std::array<std::optional<IterationEstimate>, partition::kNumMeshAxes> axis;
  std::array<int64_t, partition::kNumMeshAxes> size{1, 1, 1, 1, 1, 1};
};

/// The coarse estimate of `plan`; nothing when it needs an axis whose
/// reference does not partition.
std::optional<IterationEstimate>
screenPlan(const PlanCandidate &plan, const ScreeningReferences &references,
           const ClusterDescription &cluster);

} // namespace metac::planner

#endif // METAC_LIB_PLANNER_SCREENING_H
