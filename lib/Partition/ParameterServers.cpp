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

namespace metac::partition {
#define GEN_PASS_DEF_METAPARAMETERSERVERS
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

/// The value before its sum over the mesh: the operand of a sum over the
/// task, data and sequence axes, or the value itself where the step runs
/// on one rank. The servers add every rank's push, so a value that each
/// of the `sequence` ranks of a sequence group holds whole (computed on
/// gathered positions, not summed over them) is pushed as its share,
/// scaled by 1 / sequence.
FailureOr<Value> partialOf(OpBuilder &b, Value summed, bool meshed,
                           int64_t sequence, Operation *user, StringRef what) {
  constexpr int16_t kSequenceAxis = 5;
  auto sum = summed.getDefiningOp<shard::AllReduceOp>();
  Value partial = summed;
  bool overSequence = false;
  if (!sum) {
    if (meshed)
      return user->emitError("parameter servers: the ")
             << what << " is not summed over the mesh where it is used";
  } else {
    for (int16_t axis : sum.getGridAxes()) {
      if (axis > 1 && axis != kSequenceAxis)
        return sum->emitError("parameter servers: the ")
               << what << " is summed over mesh axis " << axis
               << "; servers take sums over the task, data and sequence "
                  "axes only";
      overSequence |= axis == kSequenceAxis;
    }
    if (sum.getReduction() != shard::ReductionKind::Sum)
      return sum->emitError("parameter servers: the ")
             << what << " is not a sum";
    partial = sum.getInput();
  }
  if (sequence > 1 && !overSequence)
    partial = nn::ScaleOp::create(b, user->getLoc(), partial,
                                  b.getF64FloatAttr(1.0 / double(sequence)));
  return partial;
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
      if (plan && (plan.getTensor() > 1 || plan.getPipeline() > 1 ||
                   plan.getExpert() > 1)) {
        train.emitError("parameter servers serve meshes of the task, data "
                        "and sequence axes (each holds whole slices of the "
                        "replicated parameters), not tensor = ")
            << plan.getTensor() << ", pipeline = " << plan.getPipeline()
            << ", expert = " << plan.getExpert();
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
  bool meshed = plan && plan.getTask() * plan.getData() > 1;

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

  int64_t sequence = plan ? plan.getSequence() : 1;
  OpBuilder before(update);
  SmallVector<Value> partials;
  for (Value g : update.getGrads()) {
    FailureOr<Value> partial =
        partialOf(before, g, meshed, sequence, update, "outer gradient");
    if (failed(partial))
      return failure();
    partials.push_back(*partial);
  }
  FailureOr<Value> partialLoss =
      partialOf(before, loss, meshed, sequence, ret, "meta-loss");
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
  // Sums nothing reads any more.
  SmallVector<Operation *> dead;
  step.walk([&](shard::AllReduceOp sum) {
    if (sum->use_empty())
      dead.push_back(sum);
  });
  for (Operation *op : dead)
    op->erase();
  step->setAttr("meta.parameter_servers", b.getI64IntegerAttr(count));
  return success();
}

} // namespace
