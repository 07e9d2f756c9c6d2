//===- KeepStageParams.cpp - a pipeline stage holds its own parameters ----===//
//
// After the pipeline split every stage function still takes every
// parameter and its optimizer state, and every stage applies the same
// outer update to all of them, although a stage reads only its layers'
// parameters: a pipeline of p stages held p copies of the model and its
// state. A parameter that only one stage reads (in the step and in every
// evaluation) becomes that stage's alone: the other stages take an empty
// tensor in its place and leave it out of their update. The meta-gradient
// all-reduce and the update guard stay as they are (every stage still
// sees every gradient: a gradient's partial sums can come from other
// stages, and the guard's norms and verdicts must agree), so the updates
// the owner applies are the ones every stage applied before.
//
//===----------------------------------------------------------------------===//

#include "metac/Partition/Passes.h"

#include "LearnedParams.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace metac::partition {
#define GEN_PASS_DEF_METAKEEPSTAGEPARAMS
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

/// The stage functions of each function that takes the parameters first
/// (the step, the evaluations): functions[f][s] is function f's stage s.
SmallVector<SmallVector<func::FuncOp>>
stageFunctions(ModuleOp module, meta::TrainOp train, int64_t stages) {
  SmallVector<SmallVector<func::FuncOp>> functions;
  auto add = [&](Attribute ref) {
    auto symbol = dyn_cast_or_null<FlatSymbolRefAttr>(ref);
    if (!symbol)
      return;
    SmallVector<func::FuncOp> perStage;
    for (int64_t s = 0; s < stages; ++s)
      if (auto f = module.lookupSymbol<func::FuncOp>(
              (symbol.getValue() + ".stage" + Twine(s)).str()))
        perStage.push_back(f);
    if (static_cast<int64_t>(perStage.size()) == stages)
      functions.push_back(std::move(perStage));
  };
  add(train->getAttr("meta.step"));
  if (auto refs = train->getAttrOfType<ArrayAttr>("meta.eval"))
    for (Attribute ref : refs)
      add(ref);
  return functions;
}

/// Whether argument `i` of `f` is read by more than the update of
/// parameter i (which `update` applies and `f` returns).
bool reads(func::FuncOp f, meta::OuterStepOp update, unsigned i) {
  BlockArgument arg = f.getArgument(i);
  for (OpOperand &use : arg.getUses()) {
    if (update && use.getOwner() == update.getOperation() &&
        use.getOperandNumber() == update.getParams().getBeginOperandIndex() + i)
      continue;
    return true;
  }
  return false;
}

/// Whether a stage that does not read parameter i can leave it out of
/// `update`: the update takes argument i as parameter i, returns its
/// result alone, and takes its state from arguments of `f` that nothing
/// else uses.
bool canDrop(func::FuncOp f, meta::OuterStepOp update, unsigned i) {
  if (!update)
    return true;
  if (i >= update.getParams().size() ||
      update.getParams()[i] != f.getArgument(i))
    return false;
  if (!llvm::all_of(update.getNewParams()[i].getUsers(),
                    [](Operation *user) { return isa<func::ReturnOp>(user); }))
    return false;
  meta::OptimizerStateLayout layout =
      meta::getOptimizerStateLayout(update.getOptimizer());
  size_t n = update.getParams().size();
  Block &entry = f.getBody().front();
  for (unsigned k = 0; k < layout.perParam; ++k) {
    auto arg = dyn_cast<BlockArgument>(update.getState()[k * n + i]);
    if (!arg || arg.getOwner() != &entry || !arg.hasOneUse())
      return false;
    if (!llvm::all_of(
            update.getNewState()[k * n + i].getUsers(),
            [](Operation *user) { return isa<func::ReturnOp>(user); }))
      return false;
  }
  return true;
}

/// An empty tensor of `type`'s element type: what a stage that does not
/// hold a parameter (or its state) takes in its place.
RankedTensorType emptyLike(Type type) {
  return RankedTensorType::get({0},
                               cast<RankedTensorType>(type).getElementType());
}

/// Leaves the parameters `dropped` out of `update` in `f`: their
/// arguments and state arguments become empty and are returned as they
/// came.
void dropFromUpdate(func::FuncOp f, meta::OuterStepOp update,
                    const llvm::SmallDenseSet<unsigned> &dropped) {
  meta::OptimizerStateLayout layout =
      meta::getOptimizerStateLayout(update.getOptimizer());
  size_t n = update.getParams().size();
  SmallVector<Value> params, grads, state;
  SmallVector<unsigned> kept;
  for (unsigned i = 0; i < n; ++i)
    if (!dropped.contains(i)) {
      kept.push_back(i);
      params.push_back(update.getParams()[i]);
      grads.push_back(update.getGrads()[i]);
    }
  for (unsigned k = 0; k < layout.perParam; ++k)
    for (unsigned i : kept)
      state.push_back(update.getState()[k * n + i]);
  // What follows the per-parameter state (Adam's step count).
  for (Value counter : update.getState().drop_front(layout.perParam * n))
    state.push_back(counter);

  OpBuilder b(update);
  auto updated =
      meta::OuterStepOp::create(b, update.getLoc(), update.getOptimizer(),
                                params, grads, state, update.getGate());
  updated->setDiscardableAttrs(update->getDiscardableAttrDictionary());
  size_t m = kept.size();
  for (auto [j, i] : llvm::enumerate(kept)) {
    update.getNewParams()[i].replaceAllUsesWith(updated.getNewParams()[j]);
    for (unsigned k = 0; k < layout.perParam; ++k)
      update.getNewState()[k * n + i].replaceAllUsesWith(
          updated.getNewState()[k * m + j]);
  }
  for (auto [j, counter] :
       llvm::enumerate(update.getNewState().drop_front(layout.perParam * n)))
    counter.replaceAllUsesWith(updated.getNewState()[layout.perParam * m + j]);
  for (unsigned i : dropped) {
    BlockArgument arg = f.getArgument(i);
    arg.setType(emptyLike(arg.getType()));
    update.getNewParams()[i].replaceAllUsesWith(arg);
    for (unsigned k = 0; k < layout.perParam; ++k) {
      auto stateArg = cast<BlockArgument>(update.getState()[k * n + i]);
      stateArg.setType(emptyLike(stateArg.getType()));
      update.getNewState()[k * n + i].replaceAllUsesWith(stateArg);
    }
  }
  update.erase();
}

struct MetaKeepStageParamsPass
    : public partition::impl::MetaKeepStageParamsBase<MetaKeepStageParamsPass> {
  using MetaKeepStageParamsBase::MetaKeepStageParamsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (meta::TrainOp train : module.getOps<meta::TrainOp>())
      keepOnStages(module, train);
  }

  void keepOnStages(ModuleOp module, meta::TrainOp train) {
    auto stagesAttr = train->getAttrOfType<IntegerAttr>("meta.pipeline_stages");
    if (!stagesAttr || stagesAttr.getInt() <= 1)
      return;
    int64_t stages = stagesAttr.getInt();
    SmallVector<SmallVector<func::FuncOp>> functions =
        stageFunctions(module, train, stages);
    auto model = module.lookupSymbol<func::FuncOp>(train.getModel());
    if (functions.empty() || !model)
      return;
    unsigned params =
        partition::learnedParamCount(model, functions.front().front());
    SmallVector<SmallVector<meta::OuterStepOp>> updates;
    for (ArrayRef<func::FuncOp> perStage : functions) {
      updates.emplace_back();
      for (func::FuncOp f : perStage)
        updates.back().push_back(partition::outerStepOf(f));
    }

    // dropped[f][s]: the parameters stage s of function f leaves out.
    SmallVector<SmallVector<llvm::SmallDenseSet<unsigned>>> dropped(
        functions.size(), SmallVector<llvm::SmallDenseSet<unsigned>>(stages));
    Builder b(module.getContext());
    for (unsigned i = 0; i < params; ++i) {
      std::optional<int64_t> owner;
      bool keep = true;
      for (auto [perStage, perUpdate] : llvm::zip(functions, updates))
        for (int64_t s = 0; s < stages && keep; ++s) {
          func::FuncOp f = perStage[s];
          if (f.getNumArguments() <= i) {
            keep = false;
            break;
          }
          if (!reads(f, perUpdate[s], i))
            continue;
          if (owner && *owner != s)
            keep = false;
          owner = s;
        }
      if (!keep || !owner)
        continue;
      for (auto [perStage, perUpdate] : llvm::zip(functions, updates))
        for (int64_t s = 0; s < stages; ++s)
          if (s != *owner && !canDrop(perStage[s], perUpdate[s], i))
            keep = false;
      if (!keep)
        continue;
      for (auto [f, perStage] : llvm::enumerate(functions))
        for (int64_t s = 0; s < stages; ++s) {
          perStage[s].setArgAttr(i, "meta.param_stage",
                                 b.getI64IntegerAttr(*owner));
          if (s != *owner)
            dropped[f][s].insert(i);
        }
    }

    for (auto [f, perStage] : llvm::enumerate(functions))
      for (int64_t s = 0; s < stages; ++s) {
        func::FuncOp function = perStage[s];
        const llvm::SmallDenseSet<unsigned> &here = dropped[f][s];
        if (here.empty())
          continue;
        if (meta::OuterStepOp update = updates[f][s])
          dropFromUpdate(function, update, here);
        else
          for (unsigned i : here)
            function.getArgument(i).setType(
                emptyLike(function.getArgument(i).getType()));
        Block &entry = function.getBody().front();
        function.setType(
            FunctionType::get(function.getContext(), entry.getArgumentTypes(),
                              entry.getTerminator()->getOperandTypes()));
      }
  }
};

} // namespace
