//===- BucketCollectives.cpp - few large all-reduces instead of many ------===//

#include "metac/Partition/Passes.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace metac::partition {
#define GEN_PASS_DEF_METABUCKETCOLLECTIVES
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

int64_t byteSize(RankedTensorType type) {
  return type.getNumElements() * type.getElementTypeBitWidth() / 8;
}

/// All-reduces that may share a bucket: same grid, axes, reduction and
/// element type.
std::string bucketKey(shard::AllReduceOp op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op.getGrid() << "|";
  llvm::interleaveComma(op.getGridAxes(), os);
  os << "|" << shard::stringifyReductionKind(op.getReduction()) << "|"
     << cast<RankedTensorType>(op.getType()).getElementType();
  return key;
}

class Bucketer {
public:
  Bucketer(Block &block, int64_t capBytes) : block(block), capBytes(capBytes) {}

  void run() {
    // Transfers between pipeline stages split the block into intervals; a
    // bucket stays inside one (see merge).
    for (Operation &op : block) {
      if (isa<shard::SendOp, shard::RecvOp>(op))
        transfers.push_back(&op);
      interval[&op] = transfers.size();
    }
    llvm::MapVector<StringRef, SmallVector<shard::AllReduceOp>> byKey;
    std::vector<std::string> keys;
    for (auto op : block.getOps<shard::AllReduceOp>())
      if (isa<RankedTensorType>(op.getType()))
        keys.push_back(bucketKey(op));
    size_t k = 0;
    for (auto op : llvm::to_vector(block.getOps<shard::AllReduceOp>()))
      if (isa<RankedTensorType>(op.getType()))
        byKey[keys[k++]].push_back(op);
    for (auto &[key, ops] : byKey)
      formBuckets(ops);
  }

private:
  /// Greedy, in program order: an all-reduce joins the open bucket unless
  /// its operand depends on a member's result, the bucket is full or a
  /// transfer lies between them.
  void formBuckets(MutableArrayRef<shard::AllReduceOp> ops) {
    // Merging an earlier key's buckets moved users of its results, and
    // those may be this key's all-reduces: their order when collected is
    // stale. The check below needs the current order, in which no member
    // can depend on an all-reduce that comes after it.
    llvm::sort(ops, [](shard::AllReduceOp a, shard::AllReduceOp b) {
      return a->isBeforeInBlock(b);
    });
    SmallVector<shard::AllReduceOp> bucket;
    DenseSet<Operation *> dependents;
    int64_t bytes = 0;
    for (shard::AllReduceOp op : ops) {
      int64_t size = byteSize(cast<RankedTensorType>(op.getType()));
      if (!bucket.empty() &&
          (dependents.contains(op) || bytes + size > capBytes ||
           interval.lookup(op) != interval.lookup(bucket.front()))) {
        merge(bucket, dependents);
        bucket.clear();
        dependents.clear();
        bytes = 0;
      }
      bucket.push_back(op);
      bytes += size;
      addDependents(op.getResult(), dependents);
    }
    merge(bucket, dependents);
  }

  /// Adds the ops of the block that use `value`, directly or not. Ops
  /// already in `dependents` are not walked again: the bucket's closure
  /// costs one visit per op, not one scan of the block per member.
  void addDependents(Value value, DenseSet<Operation *> &dependents) {
    SmallVector<Value> work{value};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        if (!top || !dependents.insert(top).second)
          continue;
        for (Value result : top->getResults())
          work.push_back(result);
      }
    }
  }

  void merge(MutableArrayRef<shard::AllReduceOp> bucket,
             const DenseSet<Operation *> &dependents) {
    if (bucket.size() < 2)
      return;
    // The merged all-reduce goes right after the last operand is computed,
    // but not before the transfer that opens the members' interval: a
    // pipeline stage receives what it was sent before each of its
    // collectives, so a collective must not cross a send or a receive.
    Operation *last = nullptr;
    if (unsigned opening = interval.lookup(bucket.front()))
      last = transfers[opening - 1];
    for (shard::AllReduceOp op : bucket)
      if (Operation *def = op.getInput().getDefiningOp())
        if (!last || last->isBeforeInBlock(def))
          last = def;
    // Users that come before the merged collective must move after it; a
    // transfer between pipeline stages must not (its peer expects it in
    // program order), so such a bucket stays unmerged.
    SmallVector<Operation *> early;
    if (last)
      for (Operation *user : dependents)
        if (user->getBlock() == &block && user->isBeforeInBlock(last))
          early.push_back(user);
    if (llvm::any_of(early, [](Operation *op) { return !isPure(op); }))
      return;
    llvm::sort(early, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    OpBuilder b(block.getParentOp()->getContext());
    if (last)
      b.setInsertionPointAfter(last);
    else
      b.setInsertionPointToStart(&block);
    Location loc = bucket.front().getLoc();

    SmallVector<Value> flat;
    for (shard::AllReduceOp op : bucket) {
      auto type = cast<RankedTensorType>(op.getType());
      flat.push_back(nn::ReshapeOp::create(
          b, loc,
          RankedTensorType::get({type.getNumElements()}, type.getElementType()),
          op.getInput()));
    }
    Value packed = tensor::ConcatOp::create(b, loc, /*dim=*/0, flat);
    shard::AllReduceOp first = bucket.front();
    auto reduced = shard::AllReduceOp::create(
        b, loc, packed.getType(), first.getGridAttr(), first.getGridAxesAttr(),
        packed, first.getReductionAttr());
    int64_t offset = 0;
    for (shard::AllReduceOp op : bucket) {
      auto type = cast<RankedTensorType>(op.getType());
      int64_t n = type.getNumElements();
      Value slice = tensor::ExtractSliceOp::create(
          b, loc, reduced.getResult(),
          ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      Value result = nn::ReshapeOp::create(b, loc, type, slice);
      op.getResult().replaceAllUsesWith(result);
      offset += n;
    }
    // Users of the results that came before the merged collective move
    // after it, in order; none of them feeds a member's operand.
    Operation *after = b.getInsertionPoint() == block.end()
                           ? &block.back()
                           : &*std::prev(b.getInsertionPoint());
    for (Operation *user : early) {
      user->moveAfter(after);
      after = user;
    }
    for (shard::AllReduceOp op : bucket)
      op.erase();
  }

  Block &block;
  int64_t capBytes;
  /// The sends and receives of the block, in order, and for each op the
  /// number of them before it (or it, for a transfer).
  SmallVector<Operation *> transfers;
  DenseMap<Operation *, unsigned> interval;
};

struct MetaBucketCollectivesPass
    : public metac::partition::impl::MetaBucketCollectivesBase<
          MetaBucketCollectivesPass> {
  using MetaBucketCollectivesBase::MetaBucketCollectivesBase;

  void runOnOperation() override {
    for (auto function : getOperation().getOps<func::FuncOp>())
      if (function.getBody().hasOneBlock())
        Bucketer(function.getBody().front(), bucketBytes).run();
  }
};

} // namespace
