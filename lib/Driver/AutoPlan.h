//===- AutoPlan.h - the driver's use of the planner -------------*- C++ -*-===//
//
// `parallel { auto }`, `--mesh=auto` and `metac plan`: the driver compiles
// to the autodiff phase, reads the cluster description, asks the planner
// (metac/Planner/Planner.h) and either prints its ranking or sets each
// training's plan to the winner, recorded as the `meta.auto_plan`
// attribute (cluster, devices, predicted time and memory) that
// `--compile-to=planned` shows.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_DRIVER_AUTOPLAN_H
#define METAC_LIB_DRIVER_AUTOPLAN_H

#include "metac/Planner/Planner.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace metac::driver {

struct PlanRequest {
  /// --mesh=auto plans every training; otherwise those with
  /// `parallel { auto }`.
  bool allTrainings = false;
  /// --cluster; else the spec's `cluster = "FILE"` (relative to the spec).
  std::string clusterFile;
  std::string specDirectory;
  planner::PlannerOptions options;
  /// The meta-gradient's recomputation the module was compiled with
  /// (meta-autodiff's `remat`), recorded with the chosen plan.
  int64_t remat = 0;
};

/// Whether some training of `module` is to be planned.
bool needsPlanner(mlir::ModuleOp module, const PlanRequest &request);

/// Whether every training that asks for planning has a plan that fits
/// (says nothing: for trying recomputation before the real planning).
bool plansFit(mlir::ModuleOp module, const PlanRequest &request);

/// Plans the trainings that ask for it (at the autodiff phase) and sets
/// their plans. Errors are emitted at the training.
mlir::LogicalResult applyAutomaticPlans(mlir::ModuleOp module,
                                        const PlanRequest &request);

/// `metac plan`: plans every training of `module` and prints the ranking,
/// as a table or (`json`) as a JSON list, best first.
mlir::LogicalResult printPlans(mlir::ModuleOp module,
                               const PlanRequest &request, bool json,
                               llvm::raw_ostream &os);

} // namespace metac::driver

#endif // METAC_LIB_DRIVER_AUTOPLAN_H
