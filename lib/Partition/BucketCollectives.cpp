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
/// element type, and the same choices of meta-select-allreduce (algorithm,
/// compression).
std::string bucketKey(shard::AllReduceOp op) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op.getGrid() << "|";
  llvm::interleaveComma(op.getGridAxes(), os);
  os << "|" << shard::stringifyReductionKind(op.getReduction()) << "|"
     << cast<RankedTensorType>(op.getType()).getElementType() << "|"
     << op->getDiscardableAttrDictionary();
  return key;
}

/// PowerSGD factors each gradient's own matrix: never bucketed.
bool keepsItsShape(shard::AllReduceOp op) {
  auto compress = op->getAttrOfType<StringAttr>("metac.compress");
  return compress && compress.getValue().starts_with("powersgd:");
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
    renumber();
    llvm::MapVector<StringRef, SmallVector<shard::AllReduceOp>> byKey;
    std::vector<std::string> keys;
    auto bucketable = [](shard::AllReduceOp op) {
      return isa<RankedTensorType>(op.getType()) && !keepsItsShape(op);
    };
    for (auto op : block.getOps<shard::AllReduceOp>())
      if (bucketable(op))
        keys.push_back(bucketKey(op));
    size_t k = 0;
    for (auto op : llvm::to_vector(block.getOps<shard::AllReduceOp>()))
      if (bucketable(op))
        byKey[keys[k++]].push_back(op);
    for (auto &[key, ops] : byKey)
      formBuckets(ops);
  }

private:
  // The block's order, kept here rather than asked of MLIR: every merge
  // inserts and moves ops, after which Operation::isBeforeInBlock
  // renumbers the whole block; with hundreds of buckets that was most of
  // the pass. Positions are spaced so that what a merge inserts fits in
  // the gap after its insertion point; when it does not, the block is
  // renumbered (rarely).
  static constexpr int64_t kSpacing = int64_t(1) << 20;

  void renumber() {
    int64_t p = 0;
    for (Operation &op : block)
      position[&op] = p += kSpacing;
  }
  int64_t positionOf(Operation *op) const { return position.lookup(op); }
  bool before(Operation *a, Operation *b) const {
    return positionOf(a) < positionOf(b);
  }
  /// Numbers the ops from `first` up to (not including) `stop` (null: the
  /// block's end), which follow `previous`.
  void numberRun(Operation *previous, Operation *first, Operation *stop) {
    int64_t count = 0;
    for (Operation *op = first; op && op != stop; op = op->getNextNode())
      ++count;
    int64_t low = previous ? positionOf(previous) : 0;
    int64_t high = stop ? positionOf(stop) : low + (count + 1) * kSpacing;
    if (high - low <= count) {
      renumber();
      return;
    }
    int64_t step = (high - low) / (count + 1), p = low;
    for (Operation *op = first; op && op != stop; op = op->getNextNode())
      position[op] = p += step;
  }

  /// The ancestor of `op` in the block (the op itself, or the op whose
  /// region holds it).
  Operation *topOf(Operation *op) const {
    return block.findAncestorOpInBlock(*op);
  }

  /// Whether `op` uses, directly or not, a result of a bucket member: a
  /// walk back through its operands, no further than the bucket's first
  /// member (a dependence path runs forward in the block).
  bool dependsOnBucket(Operation *op, const DenseSet<Operation *> &members,
                       int64_t firstPosition) const {
    SmallVector<Operation *> work{op};
    DenseSet<Operation *> seen{op};
    while (!work.empty()) {
      Operation *current = work.pop_back_val();
      bool found = false;
      current->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def)
            continue;
          Operation *top = topOf(def);
          if (!top || top == current || positionOf(top) < firstPosition)
            continue;
          if (members.contains(top)) {
            found = true;
            return WalkResult::interrupt();
          }
          if (seen.insert(top).second)
            work.push_back(top);
        }
        return WalkResult::advance();
      });
      if (found)
        return true;
    }
    return false;
  }

  /// Greedy, in program order: an all-reduce joins the open bucket unless
  /// its operand depends on a member's result, the bucket is full or a
  /// transfer lies between them.
  void formBuckets(MutableArrayRef<shard::AllReduceOp> ops) {
    // Merging an earlier key's buckets moved users of its results, and
    // those may be this key's all-reduces: their order when collected is
    // stale. The check below needs the current order, in which no member
    // can depend on an all-reduce that comes after it.
    llvm::sort(ops, [&](shard::AllReduceOp a, shard::AllReduceOp b) {
      return before(a, b);
    });
    SmallVector<shard::AllReduceOp> bucket;
    DenseSet<Operation *> members;
    int64_t bytes = 0;
    for (shard::AllReduceOp op : ops) {
      int64_t size = byteSize(cast<RankedTensorType>(op.getType()));
      if (!bucket.empty() &&
          (bytes + size > capBytes ||
           interval.lookup(op) != interval.lookup(bucket.front()) ||
           dependsOnBucket(op, members, positionOf(bucket.front())))) {
        merge(bucket);
        bucket.clear();
        members.clear();
        bytes = 0;
      }
      bucket.push_back(op);
      members.insert(op);
      bytes += size;
    }
    merge(bucket);
  }

  /// The ops of the block before `limit` that use a member's result,
  /// directly or not, in block order (a walk forward that stops at
  /// `limit`: what comes after it cannot lead back before it).
  SmallVector<Operation *> usersBefore(ArrayRef<shard::AllReduceOp> bucket,
                                       Operation *limit) const {
    SmallVector<Operation *> found;
    DenseSet<Operation *> seen;
    SmallVector<Value> work;
    for (shard::AllReduceOp op : bucket)
      work.push_back(op.getResult());
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        Operation *top = topOf(user);
        if (!top || !before(top, limit) || !seen.insert(top).second)
          continue;
        found.push_back(top);
        for (Value result : top->getResults())
          work.push_back(result);
      }
    }
    llvm::sort(found, [&](Operation *a, Operation *b) { return before(a, b); });
    return found;
  }

  void merge(MutableArrayRef<shard::AllReduceOp> bucket) {
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
        if (!last || before(last, topOf(def)))
          last = topOf(def);
    // Users that come before the merged collective must move after it; a
    // transfer between pipeline stages must not (its peer expects it in
    // program order), so such a bucket stays unmerged.
    SmallVector<Operation *> early;
    if (last)
      early = usersBefore(bucket, last);
    if (llvm::any_of(early, [](Operation *op) { return !isPure(op); }))
      return;
    OpBuilder b(block.getParentOp()->getContext());
    if (last)
      b.setInsertionPointAfter(last);
    else
      b.setInsertionPointToStart(&block);
    Operation *next = last ? last->getNextNode() : &block.front();
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
    // The members' choices (equal: they are part of the key).
    reduced->setDiscardableAttrs(first->getDiscardableAttrDictionary());
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
      // `next` stays the first op after what this merge placed.
      if (user == next)
        next = next->getNextNode();
      user->moveAfter(after);
      after = user;
    }
    for (shard::AllReduceOp op : bucket) {
      if (op.getOperation() == next)
        next = next->getNextNode();
      position.erase(op);
      op.erase();
    }
    numberRun(last, last ? last->getNextNode() : &block.front(), next);
  }

  Block &block;
  int64_t capBytes;
  /// The sends and receives of the block, in order, and for each op the
  /// number of them before it (or it, for a transfer).
  SmallVector<Operation *> transfers;
  DenseMap<Operation *, unsigned> interval;
  DenseMap<Operation *, int64_t> position;
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
