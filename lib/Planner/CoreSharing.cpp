//===- CoreSharing.cpp - ranks that share a node's cores ------------------===//

#include "CoreSharing.h"

#include <algorithm>
#include <cmath>

using namespace metac::planner;

std::vector<std::vector<int64_t>>
metac::planner::pinnedStages(int64_t localRanks, int64_t world, int64_t stages,
                             double processors) {
  int64_t cores = int64_t(std::llround(processors));
  if (world != localRanks || cores < 1 ||
      std::abs(processors - double(cores)) > 1e-6 || localRanks <= cores ||
      localRanks % cores != 0 || stages < 1 || localRanks % stages != 0)
    return {};
  // The runtime's rule (Placement.h): ranks ordered stage by stage, dealt
  // round the cores.
  std::vector<std::vector<int64_t>> onCore(cores);
  int64_t perStage = localRanks / stages;
  for (int64_t stage = 0; stage < stages; ++stage)
    for (int64_t within = 0; within < perStage; ++within)
      onCore[(stage * perStage + within) % cores].push_back(stage);
  return onCore;
}

std::vector<double> metac::planner::stageRates(
    const std::vector<double> &demand,
    const std::vector<std::vector<int64_t>> &stagesOnCore, double ranksPerStage,
    double processors, bool shared) {
  size_t n = demand.size();
  std::vector<double> rate(n, 1.0);
  if (!shared)
    return rate;
  if (stagesOnCore.empty()) {
    double active = 0;
    for (double d : demand)
      active += d * ranksPerStage;
    if (active > processors)
      std::fill(rate.begin(), rate.end(), processors / active);
    return rate;
  }
  for (const std::vector<int64_t> &stages : stagesOnCore) {
    double active = 0;
    for (int64_t s : stages)
      active += demand[s];
    double coreRate = active > 1 ? 1 / active : 1.0;
    for (int64_t s : stages)
      rate[s] = std::min(rate[s], coreRate);
  }
  return rate;
}
