//===- CarryBuffers.cpp - one buffer per carried value where it suffices --===//
//
// The pipedream schedule carries activations, stashed weights and the task
// batch from one call of a stage's step to the next. The runtime keeps two
// buffers per site so that a call's load and store need no order; where
// the loaded value's reads all end before the store, the store may
// overwrite the one buffer it would read next call. Stores of persistent
// values (arguments, constants) move after those reads where nothing
// writes them in between; stores of activations stay where they are
// (moving them would keep the activation alive longer).
//
//===----------------------------------------------------------------------===//

#include "metac/Partition/Passes.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace metac::partition {
#define GEN_PASS_DEF_METACARRYBUFFERS
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

constexpr StringLiteral kBuffers = "metac.carry_buffers";

/// The op of `block` at or above `op`.
Operation *topLevel(Operation *op, Block &block) {
  while (op && op->getBlock() != &block)
    op = op->getParentOp();
  return op;
}

bool isView(Operation *op) {
  return isa<nn::ReshapeOp, nn::StopGradientOp, tensor::ExtractSliceOp>(op);
}

/// The last top-level op that reads `loaded` (through views, and an
/// asynchronous collective until its wait), or null where one may read it
/// after the call's last op: a send (completed at the step's end), a stale
/// sum (applied in a later call), the step's results.
Operation *lastRead(Value loaded, Block &block,
                    const DenseMap<Operation *, unsigned> &position) {
  Operation *last = loaded.getDefiningOp();
  SmallVector<Value> worklist = {loaded};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *top = topLevel(user, block);
      if (!top || isa<shard::SendOp>(user) ||
          top->hasTrait<OpTrait::IsTerminator>() ||
          top->hasAttr("metac.staleness"))
        return nullptr;
      SmallVector<Operation *, 2> readers = {top};
      if (top->hasAttr("metac.async"))
        for (Operation *wait : top->getUsers())
          readers.push_back(topLevel(wait, block));
      for (Operation *reader : readers)
        if (reader && position.lookup(reader) > position.lookup(last))
          last = reader;
      if (isView(user))
        worklist.push_back(user->getResult(0));
    }
  }
  return last;
}

/// Whether an op in (from, to] writes `value` (or a view of it) in place.
bool writtenBetween(Value value, Operation *from, Operation *to) {
  SmallVector<Value> views = {value};
  for (unsigned i = 0; i < views.size(); ++i)
    for (Operation *user : views[i].getUsers())
      if (isView(user))
        views.push_back(user->getResult(0));
  for (Operation *op = from->getNextNode(); op; op = op->getNextNode()) {
    if (isa<meta::OuterStepOp, meta::ServerStepOp>(op) &&
        llvm::any_of(op->getOperands(),
                     [&](Value v) { return llvm::is_contained(views, v); }))
      return true;
    if (op == to)
      break;
  }
  return false;
}

void assignBuffers(func::FuncOp function) {
  Block &block = function.getBody().front();
  DenseMap<int64_t, SmallVector<meta::CarryStoreOp>> stores;
  DenseMap<int64_t, SmallVector<meta::CarryLoadOp>> loads;
  for (Operation &op : block) {
    op.removeAttr(kBuffers);
    if (auto store = dyn_cast<meta::CarryStoreOp>(op))
      stores[store.getSite()].push_back(store);
    if (auto load = dyn_cast<meta::CarryLoadOp>(op))
      loads[load.getSite()].push_back(load);
  }
  for (auto &[site, siteLoads] : loads) {
    auto it = stores.find(site);
    if (siteLoads.size() != 1 || it == stores.end() || it->second.size() != 1)
      continue;
    meta::CarryLoadOp load = siteLoads.front();
    meta::CarryStoreOp store = it->second.front();
    DenseMap<Operation *, unsigned> position;
    for (Operation &op : block)
      position[&op] = position.size();
    Operation *last = lastRead(load.getResult(), block, position);
    if (!last)
      continue;
    if (position[store] < position[last]) {
      // A persistent value's store may wait until the reads are done.
      Value value = store.getValue();
      bool persistent =
          isa<BlockArgument>(value) || value.getDefiningOp<arith::ConstantOp>();
      if (!persistent || writtenBetween(value, store, last))
        continue;
      store->moveAfter(last);
    }
    OpBuilder b(function.getContext());
    store->setAttr(kBuffers, b.getI32IntegerAttr(1));
    load->setAttr(kBuffers, b.getI32IntegerAttr(1));
  }
}

struct CarryBuffers : partition::impl::MetaCarryBuffersBase<CarryBuffers> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp function) {
      if (function.getBody().hasOneBlock())
        assignBuffers(function);
    });
  }
};

} // namespace
