//===- Passes.td - cost-model passes -----------------------*- tablegen -*-===//

#ifndef METAC_PLANNER_PASSES_TD
#define METAC_PLANNER_PASSES_TD

include "mlir/Pass/PassBase.td"

def MetaCostReport : Pass<"meta-cost-report", "::mlir::func::FuncOp"> {
  let summary = "Report each op's FLOPs and bytes as remarks";
  let description = [{
    Emits a remark on every op that computes or moves data with its cost
    model counts (`metac/Planner/OpCost.h`): floating-point operations (a
    multiply-add counts two), bytes its kernel reads and writes, and bytes
    it communicates; then one on the function with the totals. Views and
    constants are silent. The IR is unchanged: the pass is how the counts
    are inspected and tested.
  }];
}

#endif // METAC_PLANNER_PASSES_TD
