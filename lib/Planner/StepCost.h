//===- StepCost.h - the cost of one step function ---------------*- C++ -*-===//

#ifndef METAC_LIB_PLANNER_STEPCOST_H
#define METAC_LIB_PLANNER_STEPCOST_H

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Planner/CostModel.h"

#include "mlir/IR/SymbolTable.h"

namespace metac::planner::detail {

/// One meta-iteration of `train` whose task ranks run `step` (or its
/// pipeline stages), on the mesh of its plan (CostModel.cpp).
llvm::Expected<IterationEstimate>
estimateStep(mlir::SymbolTable &symbols, meta::TrainOp train,
             mlir::FlatSymbolRefAttr step, const ClusterDescription &cluster);

} // namespace metac::planner::detail

#endif // METAC_LIB_PLANNER_STEPCOST_H
