//===- MemoryReport.cpp - a function's scratch peak as a remark -----------===//

#include "metac/Planner/CostModel.h"
#include "metac/Planner/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace metac::planner {
#define GEN_PASS_DEF_METAMEMORYREPORT
#include "metac/Planner/Passes.h.inc"
} // namespace metac::planner

using namespace mlir;
using namespace metac::planner;

namespace {

struct MetaMemoryReportPass
    : public metac::planner::impl::MetaMemoryReportBase<MetaMemoryReportPass> {
  void runOnOperation() override {
    func::FuncOp function = getOperation();
    ScratchUse use = replayScratch(function);
    function.emitRemark() << "scratch peak " << use.peakBytes
                          << " bytes: " << use.blocks << " blocks, "
                          << use.reused << " reused";
  }
};

} // namespace
