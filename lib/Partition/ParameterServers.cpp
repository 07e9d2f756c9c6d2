//===- ParameterServers.cpp - the outer update on parameter servers -------===//
//
// A training step ends with the sums of the outer gradients and of the
// meta-loss over the mesh, the update guard and the outer optimizer. With
// parameter servers those become one meta.server_step over the partial
// (unsummed) values: the servers sum the pushes, guard and apply the
// update, and the ranks pull the parameters. The optimizer state leaves
// the step's signature: the servers keep it.
//
//===----------------------------------------------------------------------===//

#include "StepGroups.h"
#include "metac/Partition/Passes.h"

#include "metac/Dialect/Meta/IR/MetaAttrs.h"
#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/SmallBitVector.h"

namespace metac::partition {
#define GEN_PASS_DEF_METAPARAMETERSERVERS
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

/// What a rank pushes for `summed`, a value every rank holds whole (the
/// outer update's operands are the same on all ranks): the servers add
/// every rank's push. Sums over the mesh are peeled off (the servers do
/// them); a gather of a sum over other axes becomes the sum of the gather
/// (collectives over different axes commute), so an expert's gradient is
/// gathered over the expert axis and summed by the servers. Whatever stays
/// whole on the ranks of an axis it was not summed over is pushed as its
/// share: scaled by 1 / (those axes' ranks).
FailureOr<Value> partialOf(OpBuilder &b, Value summed, meta::PlanAttr plan,
                           Operation *user, StringRef what) {
  llvm::SmallBitVector sumAxes(6);
  Value v = summed;
  while (true) {
    if (auto sum = v.getDefiningOp<shard::AllReduceOp>()) {
      if (sum.getReduction() != shard::ReductionKind::Sum)
        return sum->emitError("parameter servers: the ")
               << what << " is not a sum";
      for (int16_t axis : sum.getGridAxes())
        sumAxes.set(axis);
      v = sum.getInput();
      continue;
    }
    auto gather = v.getDefiningOp<shard::AllGatherOp>();
    auto inner = gather ? gather.getInput().getDefiningOp<shard::AllReduceOp>()
                        : shard::AllReduceOp();
    if (!inner || inner.getReduction() != shard::ReductionKind::Sum ||
        llvm::any_of(inner.getGridAxes(), [&](int16_t axis) {
          return llvm::is_contained(gather.getGridAxes(), axis);
        }))
      break;
    Operation *moved = b.clone(*gather);
    moved->setOperand(0, inner.getInput());
    for (int16_t axis : inner.getGridAxes())
      sumAxes.set(axis);
    v = moved->getResult(0);
  }
  int64_t holders = 1;
  if (plan)
    for (auto [axis, size] : llvm::enumerate(plan.getMeshSizes()))
      if (!sumAxes.test(axis))
        holders *= size;
  if (holders > 1)
    v = nn::ScaleOp::create(b, user->getLoc(), v,
                            b.getF64FloatAttr(1.0 / double(holders)));
  return v;
}

struct ParameterServers
    : partition::impl::MetaParameterServersBase<ParameterServers> {
  using Base::Base;

  LogicalResult rewrite(meta::TrainOp train, func::FuncOp step, int64_t count,
                        int64_t lag, bool async);

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (meta::TrainOp train : module.getOps<meta::TrainOp>()) {
      int64_t count = servers;
      if (count < 0) {
        auto spec = train->getAttrOfType<IntegerAttr>("meta.parameter_servers");
        count = spec ? spec.getInt() : 0;
      }
      bool async = asynchronous || train->hasAttr("meta.asynchronous");
      int64_t lag = staleness;
      if (auto spec = train->getAttrOfType<IntegerAttr>("meta.staleness");
          spec && lag < 0)
        lag = spec.getInt();
      if (count == 0) {
        if (async) {
          train.emitError("asynchronous updates (staleness = inf) need "
                          "parameter servers: an all-reduce meets every "
                          "rank; add parameter_servers = N "
                          "(--parameter-servers=N)");
          return signalPassFailure();
        }
        continue;
      }
      if (async && lag > 0) {
        train.emitError("staleness is either a bound or inf, not both");
        return signalPassFailure();
      }
      meta::PlanAttr plan = train.getPlanAttr();
      if (plan && (plan.getTensor() > 1 || plan.getPipeline() > 1)) {
        train.emitError("parameter servers serve meshes of the task, data, "
                        "expert and sequence axes (each holds whole slices "
                        "of the replicated parameters), not tensor = ")
            << plan.getTensor() << ", pipeline = " << plan.getPipeline();
        return signalPassFailure();
      }
      if (metac::partition::hasStepGroups(train)) {
        train.emitError("parameter servers do not combine with a mixed "
                        "meta-batch whose task ranks run different steps yet");
        return signalPassFailure();
      }
      auto stepName = train->getAttrOfType<FlatSymbolRefAttr>("meta.step");
      auto step = stepName ? module.lookupSymbol<func::FuncOp>(stepName)
                           : func::FuncOp();
      if (!step) {
        train.emitError("parameter servers need the training step (compile "
                        "to the optimized phase)");
        return signalPassFailure();
      }
      if (failed(rewrite(train, step, count, std::max<int64_t>(lag, 0), async)))
        return signalPassFailure();
      // The servers pace the ranks now: the all-reduce's staleness is not
      // applied as well.
      train->removeAttr("meta.staleness");
      train->removeAttr("meta.asynchronous");
    }
  }
};

LogicalResult ParameterServers::rewrite(meta::TrainOp train, func::FuncOp step,
                                        int64_t count, int64_t lag,
                                        bool async) {
  meta::PlanAttr plan = train.getPlanAttr();
  if (step->hasAttr("meta.zero_parts"))
    return train.emitError("parameter servers hold the optimizer state: "
                           "they do not combine with ZeRO");
  for (unsigned i = 0; i < step.getNumArguments(); ++i)
    if (step.getArgAttr(i, meta::kLossScaleAttrName))
      return train.emitError("parameter servers do not combine with dynamic "
                             "loss scaling");

  SmallVector<meta::OuterStepOp> updates;
  step.walk([&](meta::OuterStepOp op) { updates.push_back(op); });
  if (updates.size() != 1)
    return step.emitError("parameter servers need one outer update in the "
                          "step, found ")
           << updates.size();
  meta::OuterStepOp update = updates.front();
  meta::UpdateGuardOp guard =
      update.getGate() ? update.getGate().getDefiningOp<meta::UpdateGuardOp>()
                       : meta::UpdateGuardOp();
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  size_t params = update.getParams().size();
  size_t stateCount = update.getState().size();
  // The step returns params..., state..., loss(, norms).
  if (ret.getNumOperands() < params + stateCount + 1)
    return step.emitError("parameter servers: the step does not return its "
                          "meta-loss after the optimizer state");
  Value loss = ret.getOperand(params + stateCount);
  if (guard && guard.getLoss() != loss)
    return guard.emitError("parameter servers: the guard looks at another "
                           "loss than the step returns");

  OpBuilder before(update);
  SmallVector<Value> partials;
  for (Value g : update.getGrads()) {
    FailureOr<Value> partial =
        partialOf(before, g, plan, update, "outer gradient");
    if (failed(partial))
      return failure();
    partials.push_back(*partial);
  }
  FailureOr<Value> partialLoss =
      partialOf(before, loss, plan, ret, "meta-loss");
  if (failed(partialLoss))
    return failure();

  // The state must be the step's own arguments, passed to nothing else.
  llvm::BitVector stateArgs(step.getNumArguments());
  for (Value s : update.getState()) {
    auto arg = dyn_cast<BlockArgument>(s);
    if (!arg || arg.getOwner() != &step.getBody().front() || !s.hasOneUse())
      return update.emitError("parameter servers: the optimizer state is "
                              "not the step's own arguments");
    stateArgs.set(arg.getArgNumber());
  }
  llvm::BitVector stateResults(ret.getNumOperands());
  for (auto [i, v] : llvm::enumerate(ret.getOperands()))
    if (llvm::is_contained(update.getNewState(), v))
      stateResults.set(i);
  for (Value s : update.getNewState())
    for (OpOperand &use : s.getUses())
      if (use.getOwner() != ret)
        return update.emitError("parameter servers: the new optimizer state "
                                "is used in the step");

  OpBuilder b(update);
  auto server = meta::ServerStepOp::create(
      b, update.getLoc(), update.getOptimizer(), update.getParams(), partials,
      *partialLoss, b.getI64IntegerAttr(count), b.getI64IntegerAttr(lag),
      async ? b.getUnitAttr() : UnitAttr(),
      guard ? b.getUnitAttr() : UnitAttr(),
      guard ? guard.getClipNormAttr() : FloatAttr());
  for (auto [from, to] :
       llvm::zip(update.getNewParams(), server.getNewParams()))
    from.replaceAllUsesWith(to);
  ret->setOperand(params + stateCount, server.getTotalLoss());
  if (guard)
    guard.getNorms().replaceAllUsesWith(server.getNorms());

  // The step's signature loses the optimizer state.
  ret->eraseOperands(stateResults);
  update.erase();
  if (guard && guard->use_empty())
    guard.erase();
  if (failed(step.eraseResults(stateResults)) ||
      failed(step.eraseArguments(stateArgs)))
    return step.emitError("parameter servers: cannot drop the optimizer "
                          "state from the step's signature");
  // Sums and gathers nothing reads any more (a gather's sum after it).
  for (bool erased = true; erased;) {
    SmallVector<Operation *> dead;
    step.walk([&](Operation *op) {
      if (isa<shard::AllReduceOp, shard::AllGatherOp>(op) && op->use_empty())
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
    erased = !dead.empty();
  }
  step->setAttr("meta.parameter_servers", b.getI64IntegerAttr(count));
  return success();
}

} // namespace
