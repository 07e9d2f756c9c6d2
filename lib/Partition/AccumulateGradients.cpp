//===- AccumulateGradients.cpp - meta-gradients over task chunks ----------===//
//
// Runs in the optimized phase, on per-rank programs: a chunk is a slice of
// this rank's tasks, and since the meta-gradient is a sum over tasks, which
// tasks share a chunk does not matter.
//
//===----------------------------------------------------------------------===//

#include "StepGroups.h"
#include "metac/Partition/Passes.h"

#include "BlockDependents.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace metac::partition {
#define GEN_PASS_DEF_METAACCUMULATEGRADIENTS
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

constexpr unsigned kBatchArguments = 4;

/// How the chunks' results combine: meta-gradients and meta-losses are
/// averaged, evaluation losses (one per task) concatenated.
enum class Combine { Mean, Concat };

class Chunker {
public:
  Chunker(func::FuncOp function, int64_t chunks, Combine combine)
      : function(function), chunks(chunks), combine(combine) {}

  LogicalResult run();

private:
  /// The operand that receives the combined value of `v`: the input of the
  /// collective that reduces or gathers it, else `v`'s use itself.
  void collectPoints();

  func::FuncOp function;
  int64_t chunks;
  Combine combine;
  SetVector<Operation *> batchOps;
  /// Operands to rewire, each holding a per-chunk value, once each (a
  /// collective's input may be reached from several users of its result).
  SetVector<OpOperand *> points;
};

void Chunker::collectPoints() {
  Block &entry = function.getBody().front();
  auto consider = [&](OpOperand &use) {
    Value v = use.get();
    Operation *def = v.getDefiningOp();
    if (!def || !batchOps.contains(def))
      return;
    // Reduce (or gather) once, after combining: the collective's input is
    // the per-chunk value.
    if (isa<shard::AllReduceOp, shard::AllGatherOp>(def) &&
        llvm::all_of(def->getUsers(), [&](Operation *user) {
          return user->hasTrait<OpTrait::IsTerminator>() ||
                 !batchOps.contains(user);
        })) {
      points.insert(&def->getOpOperand(0));
      return;
    }
    points.insert(&use);
  };
  for (Operation &op : entry)
    if (isa<meta::OuterStepOp, meta::UpdateGuardOp>(op))
      for (OpOperand &use : op.getOpOperands())
        consider(use);
  for (OpOperand &use : entry.getTerminator()->getOpOperands())
    consider(use);
}

LogicalResult Chunker::run() {
  Block &entry = function.getBody().front();
  if (function.getNumArguments() < kBatchArguments)
    return function.emitOpError("has no task batch to chunk");
  auto batchArgs = entry.getArguments().take_back(kBatchArguments);
  int64_t tasks = cast<RankedTensorType>(batchArgs[0].getType()).getDimSize(0);
  // What depends on the batch, up to the outer step (whose results are the
  // next iteration's parameters, computed once) and its guard (which looks
  // at the whole gradient).
  batchOps =
      partition::getDependents(entry, ValueRange(batchArgs), [](Operation *op) {
        return isa<meta::OuterStepOp, meta::UpdateGuardOp>(op);
      });
  collectPoints();

  // What each chunk computes: the batch-dependent ops the points need.
  SetVector<Operation *> needed;
  for (OpOperand *point : points)
    if (Operation *def = point->get().getDefiningOp()) {
      BackwardSliceOptions options;
      options.filter = [&](Operation *op) { return batchOps.contains(op); };
      (void)getBackwardSlice(def, &needed, options);
      needed.insert(def);
    }
  SmallVector<Operation *> region(needed.begin(), needed.end());
  llvm::sort(region,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });

  // Everything that uses a point moves to the end, after the chunks.
  SetVector<Operation *> owners;
  SmallVector<Value> ownerResults;
  for (OpOperand *point : points)
    if (point->getOwner() != entry.getTerminator() &&
        owners.insert(point->getOwner()))
      llvm::append_range(ownerResults, point->getOwner()->getResults());
  SetVector<Operation *> tail = owners;
  for (Operation *op : partition::getDependents(entry, ownerResults))
    tail.insert(op);
  SmallVector<Operation *> tailOps;
  for (Operation *op : tail)
    if (op != entry.getTerminator())
      tailOps.push_back(op);
  llvm::sort(tailOps,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : tailOps)
    op->moveBefore(entry.getTerminator());

  // Chunk c reads tasks [c * tasks, (c + 1) * tasks) of the larger batch.
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = function.getLoc();
  SmallVector<SmallVector<Value>> slices(chunks);
  for (BlockArgument arg : batchArgs) {
    auto type = cast<RankedTensorType>(arg.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] *= chunks;
    arg.setType(RankedTensorType::get(shape, type.getElementType()));
    for (int64_t c = 0; c < chunks; ++c) {
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes,
          strides(type.getRank(), b.getIndexAttr(1));
      offsets[0] = b.getIndexAttr(c * tasks);
      for (int64_t size : type.getShape())
        sizes.push_back(b.getIndexAttr(size));
      slices[c].push_back(tensor::ExtractSliceOp::create(
          b, loc, type, arg, offsets, sizes, strides));
    }
  }
  for (auto [i, arg] : llvm::enumerate(batchArgs))
    arg.replaceUsesWithIf(slices[0][i], [&](OpOperand &use) {
      return !isa<tensor::ExtractSliceOp>(use.getOwner());
    });

  // Chunks 1.. are clones of chunk 0 (the original ops) on their slices.
  Operation *firstTail = tailOps.empty() ? entry.getTerminator() : tailOps[0];
  b.setInsertionPoint(firstTail);
  SmallVector<IRMapping> mappings(chunks);
  for (int64_t c = 1; c < chunks; ++c) {
    for (auto [i, arg] : llvm::enumerate(batchArgs))
      mappings[c].map(slices[0][i], slices[c][i]);
    for (Operation *op : region)
      b.clone(*op, mappings[c]);
  }
  DenseMap<Value, Value> combined;
  for (OpOperand *point : points) {
    Value v = point->get();
    Value &result = combined[v];
    if (!result) {
      SmallVector<Value> parts{v};
      for (int64_t c = 1; c < chunks; ++c)
        parts.push_back(mappings[c].lookupOrDefault(v));
      if (combine == Combine::Mean) {
        result = parts[0];
        for (Value part : ArrayRef<Value>(parts).drop_front())
          result = nn::AddOp::create(b, loc, result, part);
        result = nn::ScaleOp::create(b, loc, result,
                                     b.getF64FloatAttr(1.0 / chunks));
      } else {
        result = tensor::ConcatOp::create(b, loc, /*dim=*/0, parts);
      }
    }
    point->set(result);
  }
  // Collectives of concatenated losses grow with them. (Averaged
  // gradients keep their types: a gradient split over the tensor or expert
  // axis reaches the outer step through a gather of its mean.)
  if (combine == Combine::Concat) {
    for (OpOperand *point : points)
      if (auto reduce = dyn_cast<shard::AllReduceOp>(point->getOwner()))
        reduce.getResult().setType(reduce.getInput().getType());
    for (OpOperand *point : points)
      if (auto gather = dyn_cast<shard::AllGatherOp>(point->getOwner())) {
        auto out = cast<RankedTensorType>(gather.getType());
        SmallVector<int64_t> shape(out.getShape());
        int64_t axis = gather.getGatherAxis().getSExtValue();
        shape[axis] = out.getDimSize(axis) * chunks;
        gather.getResult().setType(
            RankedTensorType::get(shape, out.getElementType()));
      }
  }
  function.setFunctionType(
      FunctionType::get(function.getContext(), entry.getArgumentTypes(),
                        entry.getTerminator()->getOperandTypes()));
  return success();
}

struct MetaAccumulateGradientsPass
    : public metac::partition::impl::MetaAccumulateGradientsBase<
          MetaAccumulateGradientsPass> {
  using MetaAccumulateGradientsBase::MetaAccumulateGradientsBase;

  void runOnOperation() override {
    if (steps <= 1)
      return;
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto train : module.getOps<meta::TrainOp>()) {
      if (train->hasAttr("meta.pipeline_stages")) {
        train.emitError("gradient accumulation and pipeline stages cannot be "
                        "combined yet (the pipeline already streams the "
                        "meta-batch in micro-batches)");
        return signalPassFailure();
      }
      if (metac::partition::hasStepGroups(train)) {
        train.emitError("gradient accumulation does not combine with a "
                        "mixed meta-batch whose task ranks run different "
                        "steps yet");
        return signalPassFailure();
      }
      auto step = train->getAttrOfType<FlatSymbolRefAttr>("meta.step");
      if (!step) {
        train.emitOpError("has no step function (run the expand phase "
                          "first)");
        return signalPassFailure();
      }
      if (failed(Chunker(symbols.lookup<func::FuncOp>(step.getValue()), steps,
                         Combine::Mean)
                     .run()))
        return signalPassFailure();
      if (auto evals = train->getAttrOfType<ArrayAttr>("meta.eval"))
        for (auto eval : evals.getAsRange<FlatSymbolRefAttr>())
          if (failed(Chunker(symbols.lookup<func::FuncOp>(eval.getValue()),
                             steps, Combine::Concat)
                         .run()))
            return signalPassFailure();
      train.setMetaBatch(train.getMetaBatch() * steps);
    }
  }
};

} // namespace
