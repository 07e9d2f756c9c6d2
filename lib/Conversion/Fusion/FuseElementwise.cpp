//===- FuseElementwise.cpp - group elementwise chains into nn.fused -------===//
//
// Groups elementwise maps, broadcasts and the sums that keep the leading
// dimension (sums over it stay runtime calls, which split them over the
// threads themselves; a generated kernel splits along the leading
// dimension). A broadcast read by several maps is
// first cloned for each, so that each group computes it in its loop instead
// of reading a materialised copy. Then each block is walked in order and
// every groupable op joins the groups of its operands' producers when that
// keeps the group schedulable as one op at its last member: no value of the
// group may be used outside it before the joining op (else the group would
// have to run before that user and after the joining op at once, a cycle).
// Joining merges every such group; an op that joins none starts one.
// Groups of two or more ops become `nn.fused` ops at the place of their
// last member; single ops stay runtime calls (already one pass, threaded).
//
//===----------------------------------------------------------------------===//

#include "metac/Conversion/Passes.h"

#include "DegenerateProducts.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <memory>

namespace metac {
#define GEN_PASS_DEF_FUSENNELEMENTWISE
#include "metac/Conversion/Passes.h.inc"
} // namespace metac

using namespace mlir;
using namespace metac;

namespace {

struct Group {
  llvm::SetVector<Operation *> members;
};

/// The dimensions a sum reduces, or none for other ops.
ArrayRef<int64_t> reducedDims(Operation *op) {
  if (auto sum = dyn_cast<nn::ReduceSumOp>(op))
    return sum.getDimensions();
  if (auto mean = dyn_cast<nn::ReduceMeanOp>(op))
    return mean.getDimensions();
  return {};
}

/// Elementwise maps, broadcasts, and sums that keep the leading dimension
/// (per task or per sample: the generated kernel splits along it over the
/// threads; a sum over it stays on the runtime, which splits it itself).
bool isGroupable(Operation *op) {
  if (!nn::FusedOp::isFusible(op))
    return false;
  if (!isa<nn::ReduceSumOp, nn::ReduceMeanOp>(op))
    return true;
  return !llvm::is_contained(reducedDims(op), 0);
}

/// Gives each groupable user of a broadcast its own copy, just before it.
void cloneSharedBroadcasts(Block &block) {
  SmallVector<nn::BroadcastOp> shared;
  for (Operation &op : block)
    if (auto broadcast = dyn_cast<nn::BroadcastOp>(op))
      if (isGroupable(broadcast) && !broadcast->hasOneUse())
        shared.push_back(broadcast);
  for (nn::BroadcastOp broadcast : shared) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : broadcast->getUses())
      if (isGroupable(use.getOwner()) && use.getOwner()->getBlock() == &block)
        uses.push_back(&use);
    // The first stays with the original.
    if (uses.size() < 2)
      continue;
    for (OpOperand *use : llvm::drop_begin(uses)) {
      OpBuilder b(use->getOwner());
      use->set(b.clone(*broadcast)->getResult(0));
    }
  }
}

/// The ancestor of `op` in `block` (`op` itself when it is there).
Operation *inBlock(Operation *op, Block *block) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

/// Whether `op` may join `group`: every use of the group's values outside
/// the group and `op` comes after `op`.
bool canJoin(const Group &group, Operation *op) {
  Block *block = op->getBlock();
  for (Operation *member : group.members)
    for (Operation *user : member->getUsers()) {
      if (user == op || group.members.contains(user))
        continue;
      Operation *at = inBlock(user, block);
      if (!at || !op->isBeforeInBlock(at))
        return false;
    }
  return true;
}

/// Splits each sum (or mean) over the leading dimension and others, whose
/// operand a groupable op computes, into a sum over the others, which
/// keeps the leading dimension and joins its operand's group, and a sum of
/// the small result over the leading dimension. The operand, often a full
/// activation (batch norm's `dy * xhat`), is then summed where the group
/// computes it instead of being written and read back (ProtoNets' sums
/// over [0, 1, 3, 4] of 4 x 75 x 64 x 28 x 28 values). A mean of equal
/// parts' means is the mean.
template <typename Reduce> void splitLeadingSums(Block &block) {
  SmallVector<Reduce> sums;
  for (Operation &op : block)
    if (auto sum = dyn_cast<Reduce>(op)) {
      ArrayRef<int64_t> dims = sum.getDimensions();
      Operation *producer = sum.getInput().getDefiningOp();
      if (dims.size() >= 2 && dims.front() == 0 && producer &&
          producer->getBlock() == &block && isGroupable(producer))
        sums.push_back(sum);
    }
  for (Reduce sum : sums) {
    auto input = cast<RankedTensorType>(sum.getInput().getType());
    SmallVector<int64_t> shape{input.getDimSize(0)};
    for (auto [d, size] : llvm::enumerate(input.getShape()))
      if (d > 0 && !llvm::is_contained(sum.getDimensions(), int64_t(d)))
        shape.push_back(size);
    // The partial right after its operand: joining the operand's group
    // there, before the operand's other users (a convolution's derivative
    // reading the same values) end the group.
    OpBuilder b(sum);
    b.setInsertionPointAfter(sum.getInput().getDefiningOp());
    Value partial = Reduce::create(
        b, sum.getLoc(), RankedTensorType::get(shape, input.getElementType()),
        sum.getInput(), sum.getDimensions().drop_front());
    // The total goes just before the sum's first user: right after the
    // partial it would be a use of the group's values that stops later
    // ops (another split sum of the same group) from joining it.
    Operation *firstUser = nullptr;
    for (Operation *user : sum->getUsers()) {
      Operation *at = inBlock(user, &block);
      if (at && (!firstUser || at->isBeforeInBlock(firstUser)))
        firstUser = at;
    }
    if (firstUser)
      b.setInsertionPoint(firstUser);
    Value total = Reduce::create(b, sum.getLoc(), sum.getType(), partial,
                                 ArrayRef<int64_t>{0});
    sum.replaceAllUsesWith(total);
    sum.erase();
  }
}

/// Replaces the members of `group` by one nn.fused op at the last member.
void outline(const Group &group) {
  Operation *last = group.members.back();
  llvm::SetVector<Value> inputs;
  SmallVector<Value> results;
  for (Operation *member : group.members) {
    for (Value operand : member->getOperands())
      if (!group.members.contains(operand.getDefiningOp()))
        inputs.insert(operand);
    for (Value result : member->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !group.members.contains(user);
          }))
        results.push_back(result);
  }
  OpBuilder b(last);
  SmallVector<Type> resultTypes;
  for (Value r : results)
    resultTypes.push_back(r.getType());
  auto fused = nn::FusedOp::create(b, last->getLoc(), resultTypes,
                                   inputs.getArrayRef(), FlatSymbolRefAttr(),
                                   IntegerAttr(), DenseBoolArrayAttr());
  Block *body = b.createBlock(&fused.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  for (Operation *member : group.members)
    b.clone(*member, mapping);
  SmallVector<Value> yielded;
  for (Value r : results)
    yielded.push_back(mapping.lookup(r));
  nn::YieldOp::create(b, last->getLoc(), yielded);
  for (auto [old, replacement] : llvm::zip(results, fused.getResults()))
    old.replaceUsesWithIf(replacement, [&](OpOperand &use) {
      return !group.members.contains(use.getOwner());
    });
  for (Operation *member : llvm::reverse(group.members))
    member->erase();
}

void fuseBlock(Block &block) {
  fusion::splitBatchedBiases(block);
  splitLeadingSums<nn::ReduceSumOp>(block);
  splitLeadingSums<nn::ReduceMeanOp>(block);
  cloneSharedBroadcasts(block);
  std::vector<std::unique_ptr<Group>> groups;
  DenseMap<Operation *, Group *> groupOf;
  for (Operation &op : block) {
    if (!isGroupable(&op))
      continue;
    Group *target = nullptr;
    for (Value operand : op.getOperands()) {
      auto found = groupOf.find(operand.getDefiningOp());
      if (found == groupOf.end() || found->second == target ||
          !canJoin(*found->second, &op))
        continue;
      if (!target) {
        target = found->second;
        continue;
      }
      // Both may end at `op`: one group, its members in block order.
      Group *merged = found->second;
      for (Operation *member : merged->members) {
        target->members.insert(member);
        groupOf[member] = target;
      }
      merged->members.clear();
      SmallVector<Operation *> ordered(target->members.begin(),
                                       target->members.end());
      llvm::sort(ordered, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      target->members =
          llvm::SetVector<Operation *>(ordered.begin(), ordered.end());
    }
    if (!target) {
      groups.push_back(std::make_unique<Group>());
      target = groups.back().get();
    }
    target->members.insert(&op);
    groupOf[&op] = target;
  }
  for (const auto &group : groups)
    if (group->members.size() > 1)
      outline(*group);
}

struct FuseNNElementwise
    : metac::impl::FuseNNElementwiseBase<FuseNNElementwise> {
  void runOnOperation() override {
    getOperation().walk([](func::FuncOp function) {
      for (Block &block : function.getBody())
        fuseBlock(block);
    });
  }
};

} // namespace
