//===- CoreSharing.h - ranks that share a node's cores ----------*- C++ -*-===//
//
// How fast each pipeline stage computes when a node's ranks outnumber its
// processors (processor_share < 1). Two regimes, as the CPU runtime runs
// them: ranks pinned one core each (pipeline stages spread over the cores,
// runtime/src/comm/Placement.h), or ranks left to the kernel's balancer,
// which the model treats as one pool of cores.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_PLANNER_CORESHARING_H
#define METAC_LIB_PLANNER_CORESHARING_H

#include <cstdint>
#include <vector>

namespace metac::planner {

/// For each core, the stage (0 .. stages - 1) of each rank pinned to it,
/// when the runtime pins: every rank of the job on one node (`world` ranks,
/// `localRanks` of them here), more ranks than `processors` (a whole
/// number) and a multiple of it. Empty when the ranks share a pool.
std::vector<std::vector<int64_t>> pinnedStages(int64_t localRanks,
                                               int64_t world, int64_t stages,
                                               double processors);

/// The fraction of full speed at which each stage computes, given what
/// each stage asks of a processor now (`demand`: 1 computing, the
/// calibrated waiting share while it waits, 0 when done). Pinned: a core
/// is shared by the demand of the ranks on it, and a stage goes at its
/// slowest core's pace. Pooled: `ranksPerStage` ranks per stage share
/// `processors`. Every stage at full speed when `shared` is false.
std::vector<double>
stageRates(const std::vector<double> &demand,
           const std::vector<std::vector<int64_t>> &stagesOnCore,
           double ranksPerStage, double processors, bool shared);

} // namespace metac::planner

#endif // METAC_LIB_PLANNER_CORESHARING_H
