//===- BatchTasks.cpp - meta.map vectorised over its tasks ----------------===//
//
// The body of a meta.map is re-emitted with a leading task axis on every
// value that depends on a mapped operand (nn::batchOp's rules). A gradient
// request in the body differentiates the sum of the per-task losses with
// respect to per-task copies of its inputs: since tasks do not interact,
// each task's slice of the gradient is that task's gradient.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/Meta/Transforms/Passes.h"

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/Transforms/Batching.h"

namespace metac::meta {
#define GEN_PASS_DEF_METABATCHTASKS
#include "metac/Dialect/Meta/Transforms/Passes.h.inc"
} // namespace metac::meta

using namespace mlir;
using namespace metac;
using namespace metac::meta;
using nn::BatchedValue;

namespace {

class TaskBatcher {
public:
  TaskBatcher(OpBuilder &b, int64_t count) : b(b), count(count) {}

  /// Emits the batched form of `block`'s ops (not its terminator).
  LogicalResult batchBlock(Block &block);
  LogicalResult batchGrad(GradOp grad);

  BatchedValue lookup(Value v) const {
    auto it = values.find(v);
    // Values from outside the map are the same for every task.
    return it == values.end() ? BatchedValue{v, false} : it->second;
  }
  void map(Value from, BatchedValue to) { values[from] = to; }

private:
  OpBuilder &b;
  int64_t count;
  DenseMap<Value, BatchedValue> values;
};

LogicalResult TaskBatcher::batchBlock(Block &block) {
  for (Operation &op : block.without_terminator()) {
    if (auto grad = dyn_cast<GradOp>(op)) {
      if (failed(batchGrad(grad)))
        return failure();
      continue;
    }
    if (op.getNumRegions())
      return op.emitOpError("cannot be vectorised over tasks here (run "
                            "meta-unroll-adapt first)");
    SmallVector<BatchedValue> operands = llvm::map_to_vector(
        op.getOperands(), [&](Value v) { return lookup(v); });
    FailureOr<BatchedValue> result =
        nn::batchOp(b, &op, operands, count, nn::BatchAxis::Tasks);
    if (failed(result))
      return failure();
    map(op.getResult(0), *result);
  }
  return success();
}

LogicalResult TaskBatcher::batchGrad(GradOp grad) {
  Location loc = grad.getLoc();
  SmallVector<Value> inputs;
  for (Value input : grad.getInputs()) {
    FailureOr<Value> v = nn::ensureBatched(b, loc, lookup(input), count);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  Block &oldBody = grad.getBody().front();
  Type lossType = grad.getValue().getType();
  SmallVector<Type> types{lossType};
  llvm::append_range(types, ValueRange(inputs).getTypes());
  auto batched = GradOp::create(b, loc, types, inputs, grad.getFirstOrder());
  bool lossBatched = false;
  {
    OpBuilder::InsertionGuard guard(b);
    Block *body = b.createBlock(&batched.getBody());
    for (auto [arg, input] : llvm::zip(oldBody.getArguments(), inputs))
      map(arg, {body->addArgument(input.getType(), loc), true});
    if (failed(batchBlock(oldBody)))
      return failure();
    BatchedValue loss = lookup(cast<YieldOp>(oldBody.back()).getLoss());
    lossBatched = loss.batched;
    Value total = lossBatched ? nn::NNBuilder(b, loc).reduceSum(loss.value, {0})
                              : loss.value;
    YieldOp::create(b, loc, total);
  }
  if (lossBatched && !grad.getValue().use_empty())
    return grad.emitOpError("the per-task value of a gradient request cannot "
                            "be used once vectorised over tasks");
  map(grad.getValue(), {batched.getValue(), false});
  for (auto [old, g] : llvm::zip(grad.getGradients(), batched.getGradients()))
    map(old, {g, true});
  return success();
}

LogicalResult batchMap(MapOp mapOp) {
  OpBuilder b(mapOp);
  TaskBatcher batcher(b, mapOp.getCount());
  Block &body = mapOp.getBody().front();
  unsigned mapped = mapOp.getMapped().size();
  for (auto [i, arg] : llvm::enumerate(body.getArguments()))
    batcher.map(arg, i < mapped
                         ? BatchedValue{mapOp.getMapped()[i], true}
                         : BatchedValue{mapOp.getShared()[i - mapped], false});
  if (failed(batcher.batchBlock(body)))
    return failure();
  SmallVector<Value> results;
  for (Value v : cast<YieldOp>(body.back()).getValues()) {
    FailureOr<Value> r = nn::ensureBatched(b, mapOp.getLoc(), batcher.lookup(v),
                                           mapOp.getCount());
    if (failed(r))
      return failure();
    results.push_back(*r);
  }
  mapOp.replaceAllUsesWith(results);
  mapOp.erase();
  return success();
}

struct MetaBatchTasksPass
    : public metac::meta::impl::MetaBatchTasksBase<MetaBatchTasksPass> {
  void runOnOperation() override {
    SmallVector<MapOp> maps;
    getOperation()->walk([&](MapOp m) { maps.push_back(m); });
    for (MapOp m : maps)
      if (failed(batchMap(m)))
        return signalPassFailure();
  }
};

} // namespace
