//===- CostReport.cpp - FLOPs and bytes per op as remarks -----------------===//

#include "metac/Planner/OpCost.h"
#include "metac/Planner/Passes.h"

#include "llvm/Support/FormatVariadic.h"

namespace metac::planner {
#define GEN_PASS_DEF_METACOSTREPORT
#include "metac/Planner/Passes.h.inc"
} // namespace metac::planner

using namespace mlir;
using namespace metac::planner;

namespace {

std::string describe(const OpCost &cost) {
  std::string text =
      llvm::formatv("{0:F0} FLOPs, {1:F0} bytes", cost.flops, cost.bytes);
  if (cost.commBytes > 0)
    text += llvm::formatv(", {0:F0} bytes communicated", cost.commBytes).str();
  return text;
}

struct MetaCostReportPass
    : public metac::planner::impl::MetaCostReportBase<MetaCostReportPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    OpCost total;
    function.walk([&](Operation *op) {
      OpCost cost = estimateOpCost(op);
      total += cost;
      if (cost.flops > 0 || cost.bytes > 0 || cost.commBytes > 0)
        op->emitRemark() << describe(cost);
    });
    function.emitRemark() << "total: " << describe(total);
  }
};

} // namespace
