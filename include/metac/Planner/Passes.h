//===- Passes.h - cost-model passes -----------------------------*- C++ -*-===//

#ifndef METAC_PLANNER_PASSES_H
#define METAC_PLANNER_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace metac::planner {

#define GEN_PASS_DECL
#include "metac/Planner/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "metac/Planner/Passes.h.inc"

} // namespace metac::planner

#endif // METAC_PLANNER_PASSES_H
