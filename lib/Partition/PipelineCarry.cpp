//===- PipelineCarry.cpp - PipeDream: two meta-iterations in one step -----===//
//
// Under `schedule = pipedream` the step's segments (runs of ops on one stage)
// are cut in two: the early half computes meta-iteration t from this call's
// task batch and weights, and the late half finishes meta-iteration t - 1
// next to it, so the stages that idle at the start and the end of a
// synchronous step work on the other iteration meanwhile. What the late ops
// read crosses from one call to the next through meta.carry_store/load:
// the early values (activations), and the weights and task batch they were
// computed with (weight stashing: both halves of an iteration see the same
// weights). The outer update applies the meta-gradient of t - 1 to the
// weights of t: every update is one iteration stale. The first call has no
// previous iteration to finish: its update is gated off.
//
//===----------------------------------------------------------------------===//

#include "PipelineSplitter.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace metac;
using namespace metac::partition::pipeline;

LogicalResult
PipelineSplitter::planCarries(const DenseMap<Operation *, int64_t> &segment,
                              int64_t segments) {
  bool guarded = false;
  function.walk([&](meta::UpdateGuardOp) { guarded = true; });
  if (!guarded)
    return function.emitOpError(
        "has no update guard, which the pipedream schedule needs to skip "
        "its first update (drop --on-nonfinite=ignore)");
  for (unsigned i = 0; i < function.getNumArguments(); ++i)
    if (function.getArgAttr(i, meta::kLossScaleAttrName))
      return function.emitOpError(
          "scales its loss, which the pipedream schedule does not combine "
          "with yet (its first call would count in the scale's history)");
  // The late half finishes the previous call's iteration with its stashed
  // weights; an update that reads the weights again after the task
  // reduction (Reptile's theta minus the adapted mean) would mix versions.
  Block &entry = function.getBody().front();
  unsigned firstBatch = entry.getNumArguments() - kBatchArguments;
  for (Operation *op : tail) {
    if (isa<meta::OuterStepOp, meta::UpdateGuardOp, func::ReturnOp>(op))
      continue;
    for (Value operand : op->getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand);
          arg && arg.getOwner() == &entry && arg.getArgNumber() < firstBatch)
        return op->emitOpError(
            "reads the weights after the reduction over tasks (as Reptile's "
            "update does), which the pipedream schedule does not stash yet");
  }
  // (With one segment no op is late: the step stays synchronous.)
  int64_t early = (segments + 1) / 2;
  for (Operation *op : region)
    if (segment.lookup(op) >= early)
      late.insert(op);
  // Cheap early ops that only late ops (or the reductions) read are
  // recomputed late rather than carried: a weight's transpose or a ReLU's
  // mask costs less to redo than to copy, and a transpose next to its
  // product folds into it.
  auto cheap = [](Operation *op) {
    return isa<nn::TransposeOp, nn::ReshapeOp, nn::StepOp, nn::BroadcastOp,
               nn::StopGradientOp, nn::ScaleOp, nn::NegOp, nn::ReluOp,
               nn::TanhOp, nn::SigmoidOp, nn::ConvertOp,
               tensor::ExtractSliceOp>(op);
  };
  DenseSet<Operation *> ownerSet(owners.begin(), owners.end());
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : llvm::reverse(region)) {
      if (late.contains(op) || !cheap(op) || op->use_empty())
        continue;
      bool onlyLate = llvm::all_of(op->getUsers(), [&](Operation *user) {
        return late.contains(user) || ownerSet.contains(user);
      });
      if (onlyLate) {
        late.insert(op);
        changed = true;
      }
    }
  }
  auto isEarly = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && region.contains(def) && !late.contains(def);
  };
  for (Operation *op : region)
    if (late.contains(op))
      for (Value operand : op->getOperands())
        if (isEarly(operand))
          carriedTo[stageOf[op]].insert(operand);
  // Partial sums of the previous call's micro-batches, where computed.
  for (Operation *owner : owners)
    if (Value point = owner->getOperand(0); isEarly(point))
      carriedTo[stageOf[point.getDefiningOp()]].insert(point);
  return success();
}

IRMapping &PipelineSplitter::mappingFor(Operation *op, int64_t mb) {
  return op && late.contains(op) ? lateMappings[mb] : mappings[mb];
}

int64_t PipelineSplitter::siteOf(Value value, int64_t mb) {
  return sites.try_emplace({value, mb}, sites.size()).first->second;
}

void PipelineSplitter::loadStash(OpBuilder &b, int64_t stage, Block &entry) {
  Block &source = function.getBody().front();
  Location loc = function.getLoc();
  // The arguments and global ops the stage's late ops reach outside the
  // region.
  DenseSet<Operation *> globalSet(globals.begin(), globals.end());
  DenseSet<Operation *> neededGlobals;
  SmallVector<bool> neededArgs(source.getNumArguments(), false);
  SmallVector<Value> worklist;
  for (Operation *op : region)
    if (late.contains(op) && stageOf[op] == stage)
      for (Value operand : op->getOperands())
        worklist.push_back(operand);
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &source)
        neededArgs[arg.getArgNumber()] = true;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def || !globalSet.contains(def) || !neededGlobals.insert(def).second)
      continue;
    llvm::append_range(worklist, def->getOperands());
  }
  // Each stored now and loaded as the previous call stored it.
  IRMapping stash;
  unsigned firstBatch = source.getNumArguments() - kBatchArguments;
  SmallVector<std::pair<unsigned, Value>> stashedBatch;
  for (unsigned i = 0; i < source.getNumArguments(); ++i) {
    if (!neededArgs[i])
      continue;
    BlockArgument arg = entry.getArgument(i);
    int64_t site = siteOf(source.getArgument(i), -1);
    meta::CarryStoreOp::create(b, loc, arg, b.getI64IntegerAttr(site));
    Value loaded = meta::CarryLoadOp::create(b, loc, arg.getType(),
                                             b.getI64IntegerAttr(site));
    if (i >= firstBatch)
      stashedBatch.push_back({i, loaded});
    else
      stash.map(source.getArgument(i), loaded);
  }
  for (Operation *op : globals)
    if (neededGlobals.contains(op))
      b.clone(*op, stash);
  lateMappings.assign(mappings.begin(), mappings.end());
  for (IRMapping &late : lateMappings)
    for (auto [from, to] : stash.getValueMap())
      late.map(from, to);
  for (auto [i, loaded] : stashedBatch) {
    auto type = cast<RankedTensorType>(source.getArgument(i).getType());
    for (int64_t mb = 0; mb < micro; ++mb)
      lateMappings[mb].map(source.getArgument(i),
                           microBatchOf(b, loc, type, loaded, mb));
  }
}

void PipelineSplitter::storeIfCarried(OpBuilder &b, int64_t stage, Value value,
                                      int64_t mb, Value now) {
  if (!carries() || late.contains(value.getDefiningOp()))
    return;
  auto it = carriedTo.find(stage);
  if (it == carriedTo.end() || !it->second.contains(value))
    return;
  meta::CarryStoreOp::create(b, value.getLoc(), now,
                             b.getI64IntegerAttr(siteOf(value, mb)));
}

Value PipelineSplitter::loadCarriedValue(OpBuilder &b, Value value,
                                         int64_t mb) {
  IRMapping &mapping = lateMappings[mb];
  if (!mapping.contains(value) && !late.contains(value.getDefiningOp()))
    mapping.map(value, meta::CarryLoadOp::create(
                           b, value.getLoc(), value.getType(),
                           b.getI64IntegerAttr(siteOf(value, mb))));
  return mapping.lookup(value);
}

void PipelineSplitter::loadCarried(OpBuilder &b, Operation *op, int64_t mb) {
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp();
        def && region.contains(def) && !late.contains(def))
      loadCarriedValue(b, operand, mb);
}

void PipelineSplitter::gateFirstUpdate(OpBuilder &b,
                                       func::FuncOp stageFunction) {
  meta::OuterStepOp outer;
  stageFunction.walk([&](meta::OuterStepOp op) { outer = op; });
  // planCarries checked the guard, whose gate the outer step takes.
  assert(outer && outer.getGate() && "a guarded step gates its update");
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(outer);
  Location loc = outer.getLoc();
  auto type = cast<RankedTensorType>(outer.getGate().getType());
  Value ones = arith::ConstantOp::create(
      b, loc, type,
      DenseElementsAttr::get(type, b.getFloatAttr(type.getElementType(), 1.0)));
  // 0 in the first call (nothing stored yet), 1 after.
  int64_t site = siteOf(ones, -2);
  meta::CarryStoreOp::create(b, loc, ones, b.getI64IntegerAttr(site));
  Value valid =
      meta::CarryLoadOp::create(b, loc, type, b.getI64IntegerAttr(site));
  Value gated = nn::MulOp::create(b, loc, outer.getGate(), valid);
  outer.getGateMutable().assign(gated);
}
