//===- Offload.cpp - the optimizer's state in host memory -----------------===//
//
// --offload=optimizer: the outer update's state leaves the device between
// updates. This pass only marks what the runtime and the lowering do: the
// trainer allocates the state in host buffers, and the outer update's
// lowering stages each parameter's state through scratch device memory.
//
//===----------------------------------------------------------------------===//

#include "metac/Partition/Passes.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace metac::partition {
#define GEN_PASS_DEF_METAOFFLOAD
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

struct Offload : partition::impl::MetaOffloadBase<Offload> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // --offload, else the training program's `offload = ...`.
    std::string offload = this->offload;
    if (offload.empty())
      module.walk([&](meta::TrainOp train) {
        if (auto spec = train->getAttrOfType<StringAttr>("meta.offload"))
          offload = spec.getValue().str();
      });
    if (offload.empty() || offload == "none")
      return;
    if (offload != "optimizer") {
      if (offload == "params")
        module.emitError("offloading parameters is not built yet: "
                         "--offload=optimizer keeps the optimizer's state in "
                         "host memory");
      else
        module.emitError("unknown offload '")
            << offload << "' (expected none or optimizer)";
      return signalPassFailure();
    }
    // Every outer update: the step's, or each pipeline stage's.
    bool servers = false;
    module.walk([&](meta::ServerStepOp) { servers = true; });
    if (servers) {
      module.emitError("--offload=optimizer: the parameter servers hold the "
                       "optimizer's state already");
      return signalPassFailure();
    }
    module.walk([&](meta::OuterStepOp update) {
      update->setAttr("metac.offload", UnitAttr::get(&getContext()));
      if (auto function = update->getParentOfType<func::FuncOp>())
        function->setAttr("meta.offload",
                          StringAttr::get(&getContext(), "optimizer"));
    });
  }
};

} // namespace
