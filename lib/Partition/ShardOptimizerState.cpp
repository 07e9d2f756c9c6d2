//===- ShardOptimizerState.cpp - ZeRO-1 over the task and data axes -------===//
//
// The ranks of the task and data axes compute the same replicated outer
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

LogicalResult shardState(func::FuncOp function, meta::OuterStepOp step,
                         shard::GridOp grid) {
  ArrayRef<int64_t> mesh = grid.getShape();
  int64_t parts = mesh[MeshAxis::Task] * mesh[MeshAxis::Data];
  if (parts == 1)
    return success();
  if (mesh[MeshAxis::Pipeline] > 1)
    return step.emitOpError("cannot shard the optimizer state of a pipelined "
                            "program yet (--zero with a pipeline axis)");
  SmallVector<shard::GridAxis> axes;
  int64_t mask = 0;
  for (unsigned axis : {MeshAxis::Task, MeshAxis::Data})
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
  SmallVector<Value> params, grads;
  SmallVector<Value> state(step.getState());
  SmallVector<bool> sharded(n, false);
  for (size_t i = 0; i < n; ++i) {
    Value p = step.getParams()[i], g = step.getGrads()[i];
    auto type = cast<RankedTensorType>(p.getType());
    sharded[i] = type.getNumElements() % parts == 0;
    params.push_back(sharded[i] ? partOf(p) : p);
    grads.push_back(sharded[i] ? partOf(g) : g);
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

  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  function.setType(FunctionType::get(
      function.getContext(), entry.getArgumentTypes(), ret.getOperandTypes()));
  function->setAttr("meta.zero_parts", b.getI64IntegerAttr(parts));
  function->setAttr("meta.zero_mask", b.getI64IntegerAttr(mask));
  return success();
}

struct MetaShardOptimizerStatePass
    : public partition::impl::MetaShardOptimizerStateBase<
          MetaShardOptimizerStatePass> {
  void runOnOperation() override {
    SmallVector<std::pair<func::FuncOp, meta::OuterStepOp>> steps;
    getOperation().walk([&](meta::OuterStepOp step) {
      steps.push_back({step->getParentOfType<func::FuncOp>(), step});
    });
    for (auto [function, step] : steps) {
      shard::GridOp grid = gridOf(function);
      if (!grid)
        continue;
      if (failed(shardState(function, step, grid)))
        return signalPassFailure();
    }
  }
};

} // namespace
