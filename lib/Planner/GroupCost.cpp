//===- GroupCost.cpp - one meta-iteration, over the groups of task ranks
//---===//
//
// A training's iteration is its step's; a mixed meta-batch whose task ranks
// run different steps (meta.step_variants) takes as long as its slowest
// group, since every rank waits for it at the all-reduce.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Planner/CostModel.h"

#include "mlir/IR/SymbolTable.h"

#include <algorithm>
#include <optional>
#include <vector>

using namespace mlir;
using namespace metac;
using namespace metac::planner;

llvm::Expected<IterationEstimate>
metac::planner::estimateIteration(ModuleOp module, StringRef trainName,
                                  const ClusterDescription &cluster) {
  SymbolTable symbols(module);
  auto train = symbols.lookup<meta::TrainOp>(trainName);
  if (!train)
    return llvm::createStringError("no training named '" + trainName.str() +
                                   "'");
  auto step = train->getAttrOfType<FlatSymbolRefAttr>("meta.step");
  if (!step)
    return llvm::createStringError(
        "training '" + trainName.str() +
        "' has no step function (compile it to the planned phase first)");
  auto variants = train->getAttrOfType<ArrayAttr>("meta.step_variants");
  auto assignment =
      train->getAttrOfType<DenseI64ArrayAttr>("meta.task_assignment");
  if (!variants || variants.size() < 2 || !assignment)
    return estimateStep(symbols, train, step, cluster);
  // A mixed meta-batch whose task ranks run different steps: every rank
  // waits for the slowest group at the all-reduce, so the iteration is
  // that group's; the FLOPs are every group's.
  int64_t coordinates = train.getPlanAttr() ? train.getPlanAttr().getTask() : 1;
  int64_t row = assignment.size() / std::max<int64_t>(coordinates, 1);
  std::vector<int64_t> ranksOfGroup(variants.size(), 0);
  for (int64_t t = 0; t < coordinates; ++t) {
    int64_t group = assignment[t * row];
    if (group >= 0 && group < static_cast<int64_t>(variants.size()))
      ++ranksOfGroup[group];
  }
  std::optional<IterationEstimate> slowest;
  double totalFlops = 0;
  uint64_t persistent = 0, scratch = 0;
  for (auto [g, variant] :
       llvm::enumerate(variants.getAsRange<FlatSymbolRefAttr>())) {
    llvm::Expected<IterationEstimate> e =
        estimateStep(symbols, train, variant, cluster);
    if (!e)
      return e.takeError();
    totalFlops += e->totalFlops * ranksOfGroup[g] / coordinates;
    persistent = std::max(persistent, e->persistentBytes);
    scratch = std::max(scratch, e->scratchBytes);
    if (!slowest || e->computeSeconds > slowest->computeSeconds)
      slowest = std::move(*e);
  }
  slowest->totalFlops = totalFlops;
  slowest->persistentBytes = persistent;
  slowest->scratchBytes = scratch;
  return std::move(*slowest);
}
