//===- Offload.cpp - optimizer state and parameters in host memory -------===//
//
// --offload=optimizer|params|all: the outer update's state, the parameters
// or both leave the device between uses. This pass only marks what the
// runtime and the lowering do: the trainer allocates them in host buffers;
// the outer update's lowering stages each parameter's state (and the
// parameter) through scratch device memory, and every op that reads a
// parameter gets a device copy for its own duration.
//
//===----------------------------------------------------------------------===//

#include "metac/Partition/Passes.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace metac::partition {
#define GEN_PASS_DEF_METAOFFLOAD
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

/// The number of leading arguments of the step functions (and the
/// evaluation functions) of `train` that are its parameters.
int64_t parameterCount(meta::TrainOp train, func::FuncOp step) {
  int64_t count = 0;
  while (count < step.getNumArguments() &&
         step.getArgAttrOfType<StringAttr>(count, "meta.param"))
    ++count;
  if (count > 0)
    return count;
  auto model = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      train, train.getModelAttr());
  return model ? int64_t(model.getNumArguments()) - 1 : 0;
}

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
    bool optimizer = offload == "optimizer" || offload == "all";
    bool params = offload == "params" || offload == "all";
    if (!optimizer && !params) {
      module.emitError("unknown offload '")
          << offload << "' (expected none, optimizer, params or all)";
      return signalPassFailure();
    }
    // Every outer update: the step's, or each pipeline stage's.
    bool servers = false;
    module.walk([&](meta::ServerStepOp) { servers = true; });
    if (servers) {
      module.emitError("--offload=")
          << offload
          << ": the parameter servers hold the parameters and the "
             "optimizer's state already";
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    module.walk([&](meta::OuterStepOp update) {
      if (optimizer)
        update->setAttr("metac.offload", UnitAttr::get(ctx));
      if (params)
        update->setAttr("metac.offload_params", UnitAttr::get(ctx));
      if (auto function = update->getParentOfType<func::FuncOp>())
        function->setAttr("meta.offload", StringAttr::get(ctx, offload));
    });
    if (params && failed(markParameters(module)))
      return signalPassFailure();
  }

  /// --offload=params: the parameters live in host memory; every step and
  /// evaluation function says how many leading arguments are parameters
  /// (`meta.offload_params`), which its lowering copies to the device
  /// around each op that reads them.
  LogicalResult markParameters(ModuleOp module) {
    SymbolTable symbols(module);
    for (auto train : module.getOps<meta::TrainOp>()) {
      if (train->hasAttr("meta.pipeline_stages"))
        return train.emitError("--offload=params does not combine with "
                               "pipeline stages yet");
      SmallVector<func::FuncOp> steps, functions;
      if (auto variants =
              train->getAttrOfType<ArrayAttr>("meta.step_variants")) {
        for (auto v : variants.getAsRange<FlatSymbolRefAttr>())
          steps.push_back(symbols.lookup<func::FuncOp>(v.getValue()));
      } else if (auto step =
                     train->getAttrOfType<FlatSymbolRefAttr>("meta.step")) {
        steps.push_back(symbols.lookup<func::FuncOp>(step.getValue()));
      }
      if (steps.empty() || !steps.front())
        continue;
      for (func::FuncOp step : steps)
        if (step && step->hasAttr("meta.zero_parts"))
          return train.emitError("--offload=params does not combine with "
                                 "ZeRO yet (its parts are gathered into the "
                                 "parameters)");
      int64_t count = parameterCount(train, steps.front());
      functions.append(steps);
      if (auto evals = train->getAttrOfType<ArrayAttr>("meta.eval"))
        for (auto e : evals.getAsRange<FlatSymbolRefAttr>())
          functions.push_back(symbols.lookup<func::FuncOp>(e.getValue()));
      Builder b(module.getContext());
      for (func::FuncOp f : functions)
        if (f)
          f->setAttr("meta.offload_params", b.getI64IntegerAttr(count));
    }
    return success();
  }
};

} // namespace
