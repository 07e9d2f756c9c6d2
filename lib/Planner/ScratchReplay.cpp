//===- ScratchReplay.cpp - the lowering's scratch memory, replayed --------===//
//
// The peak of scratch memory a step's lowering holds: its liveness (a
// buffer dies after the last reader of it or of a view of it) and its
// reuse of freed blocks of the same size, replayed without lowering.
//
//===----------------------------------------------------------------------===//

#include "metac/Planner/CostModel.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Planner/OpCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <map>

using namespace mlir;
using namespace metac;
using namespace metac::planner;

namespace {

uint64_t roundUp(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

uint64_t byteSize(Type type) { return tensorBytes(type); }

/// Ops the lowering turns into no call and no buffer: they share their
/// operand's buffer.
bool isView(Operation *op) {
  return isa<nn::ReshapeOp, nn::StopGradientOp, tensor::ExtractSliceOp,
             shard::SendOp>(op);
}

/// The results of the call that `op` (an attention derivative) shares with
/// its siblings, allocated at the first of them; none at the others.
template <typename Op> SmallVector<Value> allocatedWithSiblings(Op op) {
  auto siblings = op.getSiblings();
  if (siblings.front() != op)
    return {};
  return llvm::map_to_vector(siblings,
                             [](Op s) { return Value(s.getResult()); });
}

/// The buffers the lowering allocates at `op`: an attention's derivative
/// ops are one call, which allocates all of their results at the first.
SmallVector<Value> allocatedAt(Operation *op) {
  if (auto backward = dyn_cast<nn::AttentionBackwardOp>(op))
    return allocatedWithSiblings(backward);
  if (auto second = dyn_cast<nn::AttentionDoubleBackwardOp>(op))
    return allocatedWithSiblings(second);
  return SmallVector<Value>(op->getResults());
}

} // namespace

ScratchUse metac::planner::replayScratch(func::FuncOp function) {
  ScratchUse use;
  if (!function.getBody().hasOneBlock())
    return use;
  // The same liveness as convert-nn-to-runtime: a buffer dies after the
  // last reader of it or of a view of it; sends keep theirs to the end;
  // returned buffers are never freed.
  Block &body = function.getBody().front();
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : body)
    position[&op] = position.size();
  DenseMap<Value, Value> buffer;
  DenseMap<Value, unsigned> death;
  DenseMap<Value, bool> returned;
  for (Operation &op : body) {
    bool view = isView(&op);
    for (Value result : op.getResults()) {
      if (!isa<RankedTensorType>(result.getType()) ||
          isa<meta::OuterStepOp, meta::CarryLoadOp>(op))
        continue;
      Value base = view ? buffer.lookup(op.getOperand(0)) : result;
      if (!base)
        continue;
      buffer[result] = base;
      unsigned last = position[&op];
      for (Operation *user : result.getUsers()) {
        last = std::max(last, position[user]);
        if (isa<shard::SendOp>(user))
          last = position.size();
        if (isa<func::ReturnOp>(user))
          returned[base] = true;
      }
      death[base] = std::max(death.lookup(base), last);
    }
  }
  DenseMap<unsigned, SmallVector<Value>> dying;
  for (auto [base, at] : death)
    if (!returned.lookup(base))
      dying[at].push_back(base);
  std::map<uint64_t, int64_t> freeBlocks;
  uint64_t held = 0;
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      break;
    // A carried value's load is a view of its site's buffers (persistent).
    if (!isView(&op) && !isa<meta::OuterStepOp, meta::CarryLoadOp>(op))
      for (Value result : allocatedAt(&op)) {
        uint64_t bytes = roundUp(byteSize(result.getType()));
        if (bytes == 0)
          continue;
        ++use.blocks;
        auto reusable = freeBlocks.find(bytes);
        if (reusable != freeBlocks.end() && reusable->second > 0) {
          --reusable->second;
          ++use.reused;
          continue;
        }
        held += bytes;
        use.peakBytes = std::max(use.peakBytes, held);
      }
    auto it = dying.find(position[&op]);
    if (it == dying.end())
      continue;
    for (Value base : it->second)
      if (uint64_t bytes = roundUp(byteSize(base.getType())))
        ++freeBlocks[bytes];
  }
  return use;
}
