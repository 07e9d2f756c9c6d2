//===- ShardOptimizerState.cpp - ZeRO over the task, data and expert axes -===//
//
// The ranks of the task, data and expert axes compute the same replicated outer
// update from the same all-reduced gradients; each can instead update 1/Z
// of every parameter, keep only that part of the optimizer state, and
// gather the updated parts. The update is elementwise, so the result is the
// same bit for bit, and the state shrinks Z times.
//
//===----------------------------------------------------------------------===//

#include "metac/Partition/Passes.h"

#include "metac/Dialect/Meta/IR/MetaAttrs.h"
#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Partition/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

namespace metac::partition {
#define GEN_PASS_DEF_METASHARDOPTIMIZERSTATE
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;
using partition::MeshAxis;

namespace {

/// The grid the function's collectives run on (none: it runs on one rank).
shard::GridOp gridOf(func::FuncOp function) {
  shard::GridOp grid;
  function.walk([&](shard::AllReduceOp op) {
    grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
        op, op.getGridAttr());
    return grid ? WalkResult::interrupt() : WalkResult::advance();
  });
  return grid;
}

/// With ZeRO-2: the whole gradient `g` as the sum over `axes` that
/// produced it (the all-reduce and its operand), when nothing else uses it.
shard::AllReduceOp reductionOf(Value g, ArrayRef<shard::GridAxis> axes,
                               meta::OuterStepOp step,
                               meta::UpdateGuardOp guard) {
  auto reduce = g.getDefiningOp<shard::AllReduceOp>();
  if (!reduce || reduce.getReduction() != shard::ReductionKind::Sum ||
      reduce.getGridAxes() != axes)
    return nullptr;
  for (Operation *user : g.getUsers())
    if (user != step.getOperation() && (!guard || user != guard.getOperation()))
      return nullptr;
  return reduce;
}

LogicalResult shardState(func::FuncOp function, meta::OuterStepOp step,
                         shard::GridOp grid, int64_t stage) {
  ArrayRef<int64_t> mesh = grid.getShape();
  // The expert axis's ranks too: the outer step gathers the experts'
  // gradients, so they update whole parameters alike.
  int64_t parts =
      mesh[MeshAxis::Task] * mesh[MeshAxis::Data] * mesh[MeshAxis::Expert];
  if (parts == 1)
    return success();
  SmallVector<shard::GridAxis> axes;
  int64_t mask = 0;
  for (unsigned axis : {MeshAxis::Task, MeshAxis::Data, MeshAxis::Expert})
    if (mesh[axis] > 1) {
      axes.push_back(shard::GridAxis(axis));
      mask |= int64_t(1) << axis;
    }
  Block &entry = function.getBody().front();
  meta::OptimizerStateLayout layout =
      meta::getOptimizerStateLayout(step.getOptimizer());
  size_t n = step.getParams().size();
  OpBuilder b(step);
  Location loc = step.getLoc();
  nn::NNBuilder nn(b, loc);

  // This rank's part of a whole tensor: flattened, then sliced (a view of
  // its stretch of the buffer; nothing moves).
  auto partOf = [&](Value whole) -> Value {
    auto type = cast<RankedTensorType>(whole.getType());
    Value flat = nn.reshape(whole, {type.getNumElements()});
    return shard::AllSliceOp::create(
        b, loc,
        RankedTensorType::get({type.getNumElements() / parts},
                              type.getElementType()),
        flat, grid.getSymName(), axes, 0);
  };
  // ZeRO-2: a gradient summed over exactly these axes is reduce-scattered
  // instead (each rank receives the sum of its part only); the guard then
  // gets, in its place, the square root of that gradient's squared norm
  // (the parts' f64 sums of squares, all-reduced), whose norm it computes
  // to the same value, non-finite where any part is.
  auto guard = step.getGate()
                   ? step.getGate().getDefiningOp<meta::UpdateGuardOp>()
                   : meta::UpdateGuardOp();
  // The parts (and the guard's stand-ins) are made before the guard.
  if (guard)
    b.setInsertionPoint(guard);
  auto scatteredPartOf = [&](shard::AllReduceOp reduce) -> Value {
    auto type = cast<RankedTensorType>(reduce.getType());
    Value flat = nn.reshape(reduce.getInput(), {type.getNumElements()});
    return shard::ReduceScatterOp::create(
        b, loc,
        RankedTensorType::get({type.getNumElements() / parts},
                              type.getElementType()),
        grid.getSymName(), axes, flat, shard::ReductionKind::Sum, APInt(64, 0));
  };
  auto normProxy = [&](Value part, Type element) -> Value {
    Type f64 = b.getF64Type();
    Value wide = nn.convert(part, f64);
    Value squares = nn.reduceSum(nn.mul(wide, wide), {0});
    auto total =
        shard::AllReduceOp::create(b, loc, squares.getType(), grid.getSymName(),
                                   axes, squares, shard::ReductionKind::Sum);
    // The guard's range: never compressed.
    total->setAttr("metac.exact", b.getUnitAttr());
    Value root = nn::SqrtOp::create(b, loc, total.getType(), total);
    return nn.reshape(nn.convert(root, element), {1});
  };
  SmallVector<Value> params, grads;
  SmallVector<Value> state(step.getState());
  SmallVector<bool> sharded(n, false);
  SmallVector<Operation *> scattered;
  for (size_t i = 0; i < n; ++i) {
    Value p = step.getParams()[i], g = step.getGrads()[i];
    auto type = cast<RankedTensorType>(p.getType());
    // A parameter kept in parts (meta-keep-params-split) has its state in
    // the same parts already.
    auto arg = dyn_cast<BlockArgument>(p);
    bool keptInParts =
        arg && arg.getOwner() == &entry &&
        function.getArgAttr(arg.getArgNumber(), "meta.param_parts");
    sharded[i] = type.getNumElements() % parts == 0 && !keptInParts;
    params.push_back(sharded[i] ? partOf(p) : p);
    shard::AllReduceOp reduce;
    if (sharded[i] && stage >= 2)
      reduce = reductionOf(g, axes, step, guard);
    if (reduce) {
      Value part = scatteredPartOf(reduce);
      grads.push_back(part);
      if (guard)
        for (OpOperand &use : guard->getOpOperands())
          if (use.get() == g)
            use.set(normProxy(part, type.getElementType()));
      scattered.push_back(reduce);
    } else {
      grads.push_back(sharded[i] ? partOf(g) : g);
    }
    if (!sharded[i])
      continue;
    auto partType = RankedTensorType::get({type.getNumElements() / parts},
                                          type.getElementType());
    for (unsigned k = 0; k < layout.perParam; ++k) {
      auto arg = dyn_cast<BlockArgument>(state[k * n + i]);
      if (!arg || arg.getOwner() != &entry || !arg.hasOneUse())
        return step.emitOpError("has optimizer state that is not an argument "
                                "of its function used by it alone, which "
                                "--zero cannot shard");
      arg.setType(partType);
    }
  }
  b.setInsertionPoint(step);
  auto updated = meta::OuterStepOp::create(b, loc, step.getOptimizer(), params,
                                           grads, state, step.getGate());
  b.setInsertionPointAfter(updated);
  for (size_t i = 0; i < n; ++i) {
    Value result = updated.getResult(i);
    if (sharded[i]) {
      auto type = cast<RankedTensorType>(step.getResult(i).getType());
      Value flat = shard::AllGatherOp::create(
          b, loc,
          RankedTensorType::get({type.getNumElements()}, type.getElementType()),
          grid.getSymName(), axes, result, APInt(64, 0));
      result = nn.reshape(flat, type.getShape());
    }
    step.getResult(i).replaceAllUsesWith(result);
  }
  for (size_t j = n; j < step.getNumResults(); ++j)
    step.getResult(j).replaceAllUsesWith(updated.getResult(j));
  step.erase();
  for (Operation *reduce : scattered)
    if (reduce->use_empty())
      reduce->erase();

  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  function.setType(FunctionType::get(
      function.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));
  function->setAttr("meta.zero_parts", b.getI64IntegerAttr(parts));
  function->setAttr("meta.zero_mask", b.getI64IntegerAttr(mask));
  function->setAttr("meta.zero_stage", b.getI64IntegerAttr(stage));
  return success();
}

struct MetaShardOptimizerStatePass
    : public partition::impl::MetaShardOptimizerStateBase<
          MetaShardOptimizerStatePass> {
  using MetaShardOptimizerStateBase::MetaShardOptimizerStateBase;

  void runOnOperation() override {
    if (stage != 1 && stage != 2) {
      getOperation().emitError("ZeRO stage ")
          << static_cast<int64_t>(stage)
          << " is not implemented (1: state; 2: state and gradients)";
      return signalPassFailure();
    }
    SmallVector<std::pair<func::FuncOp, meta::OuterStepOp>> steps;
    getOperation().walk([&](meta::OuterStepOp step) {
      steps.push_back({step->getParentOfType<func::FuncOp>(), step});
    });
    for (auto [function, step] : steps) {
      shard::GridOp grid = gridOf(function);
      if (!grid)
        continue;
      if (failed(shardState(function, step, grid, stage)))
        return signalPassFailure();
    }
  }
};

} // namespace
