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

def MetaMemoryReport : Pass<"meta-memory-report", "::mlir::func::FuncOp"> {
  let summary = "Report the scratch memory a function's runtime code holds";
  let description = [{
    Replays the runtime's arena over the function as convert-nn-to-runtime
    lowers it (`metac/Planner/CostModel.h`): every op result is a scratch
    block of a 64-byte multiple; views share their operand's block; a block
    is freed after its last reader (a send keeps it to the end; returned
    blocks stay) and reused by a later block of the same size. Emits one
    remark on the function: the most bytes held at once, the blocks
    allocated and how many reused a freed one. The cost model adds the
    persistent buffers (parameters, optimizer state, the batch) to this
    peak; the IR is unchanged.
  }];
}

#endif // METAC_PLANNER_PASSES_TD
