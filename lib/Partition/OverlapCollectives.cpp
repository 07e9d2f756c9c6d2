//===- OverlapCollectives.cpp - gradients reduced while others compute ----===//
//
// Two passes share the overlap decision: meta-hoist-collectives moves each
// gradient collective up to where its operand is ready (before bucketing,
// so buckets follow readiness), and meta-overlap-collectives splits the
// collectives that have compute after them into a start (the collective,
// marked `metac.async`) and a `meta.wait` before the first use.
//
//===----------------------------------------------------------------------===//

#include "metac/Partition/Passes.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace metac::partition {
#define GEN_PASS_DEF_METAHOISTCOLLECTIVES
#define GEN_PASS_DEF_METAOVERLAPCOLLECTIVES
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

constexpr llvm::StringLiteral kAsync = "metac.async";

/// The pass option, else the training program's `overlap`, else off; an
/// error for anything but true or false.
FailureOr<bool> overlapRequested(ModuleOp module, StringRef option) {
  std::string chosen = option.str();
  module.walk([&](meta::TrainOp train) {
    if (auto spec = train->getAttrOfType<BoolAttr>("meta.overlap");
        spec && chosen.empty())
      chosen = spec.getValue() ? "true" : "false";
  });
  if (chosen.empty() || chosen == "false")
    return false;
  if (chosen == "true")
    return true;
  module.emitError() << "overlap must be true or false, got '" << chosen << "'";
  return failure();
}

/// Collectives that may start early (not the stale-synchronous sums,
/// which lag by whole iterations on their own).
bool isOverlappable(Operation *op) {
  return isa<shard::AllReduceOp, shard::ReduceScatterOp>(op) &&
         isa<RankedTensorType>(op->getResult(0).getType()) &&
         !op->hasAttr("metac.staleness");
}

/// Moves collectives and the pure ops that only feed them up to right after
/// their operands, in one block.
class Hoister {
public:
  explicit Hoister(Block &block) : block(block) {
    // The last send or receive before each op: nothing moves above it.
    Operation *transfer = nullptr;
    for (Operation &op : block) {
      floorOf[&op] = transfer;
      if (isa<shard::SendOp, shard::RecvOp>(op))
        transfer = &op;
    }
  }

  void run() {
    for (Operation *op : llvm::to_vector(
             llvm::map_range(block, [](Operation &op) { return &op; })))
      if (isOverlappable(op))
        hoist(op);
  }

private:
  /// Whether `def` only feeds `user` and may move with it.
  bool feedsOnly(Operation *def, Operation *user) const {
    if (def->getBlock() != &block || !isPure(def) ||
        def->getNumRegions() != 0 || def->getNumResults() == 0)
      return false;
    for (Value result : def->getResults())
      for (Operation *u : result.getUsers())
        if (u != user)
          return false;
    return true;
  }

  void hoist(Operation *op) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && feedsOnly(def, op))
        hoist(def);
    // Right after the latest operand, not above the last transfer.
    Operation *after = floorOf.lookup(op);
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def->getBlock() != &block)
        continue;
      if (!after || after->isBeforeInBlock(def))
        after = def;
    }
    if (after) {
      if (after->getNextNode() != op)
        op->moveAfter(after);
    } else if (&block.front() != op) {
      op->moveBefore(&block.front());
    }
  }

  Block &block;
  DenseMap<Operation *, Operation *> floorOf;
};

/// Ops that cost nothing at run time (views) or that are collectives
/// themselves: no overlap to gain from them alone.
bool isFree(Operation *op) {
  return isa<nn::ReshapeOp, tensor::ExtractSliceOp, shard::AllReduceOp,
             shard::ReduceScatterOp, shard::AllGatherOp, shard::AllSliceOp,
             shard::AllToAllOp, meta::WaitOp>(op);
}

bool isView(Operation *op) {
  return isa<nn::ReshapeOp, tensor::ExtractSliceOp>(op);
}

/// Splits the collectives of `block` that have compute before the first
/// use of their result into a start and a `meta.wait`. Views of the result
/// (a bucket's slices) are no use: they move after the wait.
void splitCollectives(Block &block) {
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : block)
    position[&op] = position.size();
  for (Operation *op : llvm::to_vector(
           llvm::map_range(block, [](Operation &op) { return &op; }))) {
    if (!isOverlappable(op) || op->hasAttr(kAsync))
      continue;
    // The views of the result, and the first op that reads through them.
    SmallVector<Operation *> views;
    DenseSet<Operation *> inViews;
    Operation *first = nullptr;
    SmallVector<Value> work{op->getResult(0)};
    while (!work.empty()) {
      for (Operation *user : work.pop_back_val().getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        if (!top)
          continue;
        if (top == user && isView(user)) {
          if (inViews.insert(user).second) {
            views.push_back(user);
            work.push_back(user->getResult(0));
          }
        } else if (!first || position[top] < position[first]) {
          first = top;
        }
      }
    }
    if (!first)
      continue;
    bool compute = false;
    for (Operation *between = op->getNextNode(); between != first;
         between = between->getNextNode())
      compute |= !inViews.contains(between) && !isFree(between);
    if (!compute)
      continue;
    llvm::sort(views, [&](Operation *a, Operation *b) {
      return position[a] < position[b];
    });
    OpBuilder b(first);
    Value result = op->getResult(0);
    auto wait = meta::WaitOp::create(b, op->getLoc(), result.getType(), result);
    result.replaceAllUsesExcept(wait.getResult(), wait);
    for (Operation *view : views)
      view->moveBefore(first);
    op->setAttr(kAsync, UnitAttr::get(op->getContext()));
  }
}

/// Runs `transform` on the body of each single-block function when
/// overlap is requested; fails on a bad request.
LogicalResult forEachBlockIfRequested(ModuleOp module, StringRef option,
                                      function_ref<void(Block &)> transform) {
  FailureOr<bool> requested = overlapRequested(module, option);
  if (failed(requested))
    return failure();
  if (!*requested)
    return success();
  SmallVector<Block *> blocks;
  module.walk([&](func::FuncOp f) {
    if (f.getBody().hasOneBlock())
      blocks.push_back(&f.getBody().front());
  });
  for (Block *block : blocks)
    transform(*block);
  return success();
}

struct HoistCollectives
    : partition::impl::MetaHoistCollectivesBase<HoistCollectives> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(forEachBlockIfRequested(getOperation(), overlap,
                                       [](Block &b) { Hoister(b).run(); })))
      signalPassFailure();
  }
};

struct OverlapCollectives
    : partition::impl::MetaOverlapCollectivesBase<OverlapCollectives> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(
            forEachBlockIfRequested(getOperation(), overlap, splitCollectives)))
      signalPassFailure();
  }
};

} // namespace
