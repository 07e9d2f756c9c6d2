//===- SelectAllReduce.cpp - the algorithm of every all-reduce ------------===//

#include "StepGroups.h"
#include "metac/Partition/Passes.h"

#include "metac/Dialect/Meta/IR/Compression.h"
#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace metac::partition {
#define GEN_PASS_DEF_METASELECTALLREDUCE
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

constexpr llvm::StringLiteral kAlgorithm = "metac.allreduce";
constexpr llvm::StringLiteral kCompress = "metac.compress";
constexpr llvm::StringLiteral kStaleness = "metac.staleness";
constexpr int16_t kTensorAxis = 2; // task, data, tensor, pipeline

/// Gradient sums: f32 or f64 sums that do not span the tensor axis (whose
/// all-reduces add a split layer's partial results), and are not marked
/// exact (the update guard's sums of squares, whose f64 range they need).
bool isCompressible(shard::AllReduceOp op) {
  Type element = cast<RankedTensorType>(op.getType()).getElementType();
  return !op->hasAttr("metac.exact") &&
         op.getReduction() == shard::ReductionKind::Sum &&
         (element.isF32() || element.isF64()) &&
         !llvm::is_contained(op.getGridAxes(), kTensorAxis);
}

/// Whether the all-reduce's result is an outer gradient: it reaches, through
/// reshapes and the tensor axis's gathers or slices of a sharded gradient,
/// a gradient operand of the outer update (not the meta-loss, not an
/// inner-loop gradient).
bool isOuterGradient(shard::AllReduceOp op) {
  SmallVector<Value> work{op.getResult()};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<nn::ReshapeOp, shard::AllGatherOp, shard::AllSliceOp>(user)) {
        work.push_back(user->getResult(0));
        continue;
      }
      if (auto guard = dyn_cast<meta::UpdateGuardOp>(user);
          guard && use.getOperandNumber() > 0)
        return true;
      if (auto step = dyn_cast<meta::OuterStepOp>(user);
          step && llvm::is_contained(step.getGrads(), v))
        return true;
    }
  }
  return false;
}

/// Whether PowerSGD's factors of the all-reduce's matrix ([dim 0, rest])
/// at `rank` are smaller than it (a vector, or a matrix too thin, is summed
/// exactly and may be bucketed).
bool factorizes(shard::AllReduceOp op, double rank) {
  auto type = cast<RankedTensorType>(op.getType());
  if (type.getRank() < 2)
    return false;
  double rows = double(type.getDimSize(0));
  double cols = double(type.getNumElements()) / rows;
  return (rows + cols) * rank < rows * cols;
}

struct SelectAllReduce
    : partition::impl::MetaSelectAllReduceBase<SelectAllReduce> {
  using Base::Base;

  /// Marks the sums over the task axis in each training step (the outer
  /// gradients and the meta-loss) `metac.staleness`: the runtime applies
  /// each `lag` iterations late, so ranks may run ahead of the slowest.
  LogicalResult markStale(int64_t lag, StringRef algorithm, StringRef wire) {
    ModuleOp module = getOperation();
    if (algorithm != "library" || wire != "none")
      return module.emitError()
             << "staleness " << lag << " sums with the library's all-reduce, "
             << "uncompressed: it does not combine with allreduce = "
             << algorithm << " or compress = " << wire;
    LogicalResult result = success();
    module.walk([&](meta::TrainOp train) {
      if (metac::partition::hasStepGroups(train)) {
        result = train.emitError("staleness does not combine with a mixed "
                                 "meta-batch whose task ranks run different "
                                 "steps yet");
        return;
      }
      auto stepName = train->getAttrOfType<FlatSymbolRefAttr>("meta.step");
      auto step = stepName ? module.lookupSymbol<func::FuncOp>(stepName)
                           : func::FuncOp();
      if (!step)
        return;
      step.walk([&](Operation *op) {
        if (isa<shard::ReduceScatterOp>(op) &&
            llvm::is_contained(cast<shard::ReduceScatterOp>(op).getGridAxes(),
                               int16_t(0))) {
          result = op->emitError("staleness does not combine with sharded "
                                 "gradients over the task axis (ZeRO-2)");
          return;
        }
        auto sum = dyn_cast<shard::AllReduceOp>(op);
        if (sum && llvm::is_contained(sum.getGridAxes(), int16_t(0)))
          sum->setAttr(
              kStaleness,
              IntegerAttr::get(IntegerType::get(op->getContext(), 64), lag));
      });
    });
    return result;
  }

  void runOnOperation() override {
    // The command line's choice, else the training program's, else none.
    std::string chosen = algorithm, wire = compress;
    getOperation().walk([&](meta::TrainOp train) {
      if (auto spec = train->getAttrOfType<StringAttr>("meta.allreduce");
          spec && chosen.empty())
        chosen = spec.getValue().str();
      if (auto spec = train->getAttrOfType<StringAttr>("meta.compress");
          spec && wire.empty())
        wire = spec.getValue().str();
    });
    if (chosen.empty())
      chosen = "library";
    if (wire.empty())
      wire = "none";
    if (chosen != "library" && chosen != "ring" && chosen != "tree" &&
        chosen != "hierarchical") {
      getOperation().emitError()
          << "unknown all-reduce algorithm '" << chosen
          << "' (expected library, ring, tree or hierarchical)";
      return signalPassFailure();
    }
    std::optional<meta::Compression> compression = meta::parseCompression(wire);
    if (!compression) {
      getOperation().emitError()
          << "unknown all-reduce compression '" << wire << "' (expected "
          << meta::kCompressionForms << ")";
      return signalPassFailure();
    }
    // --staleness, else the program's, else 0 (synchronous).
    int64_t lag = staleness;
    getOperation().walk([&](meta::TrainOp train) {
      if (auto spec = train->getAttrOfType<IntegerAttr>("meta.staleness");
          spec && lag < 0)
        lag = spec.getInt();
    });
    // Parameter servers pace the ranks themselves (meta.server_step), and
    // take the outer gradients that top-k and PowerSGD would compress.
    bool servers = false;
    getOperation().walk([&](meta::ServerStepOp) { servers = true; });
    if (servers) {
      lag = 0;
      if (compression->withErrorFeedback()) {
        getOperation().emitError()
            << "compress = " << wire
            << " compresses the outer gradients' all-reduce, which "
               "parameter servers replace (their pushes are not compressed)";
        return signalPassFailure();
      }
    }
    // The pipedream schedule's first call sums gradients of nothing, which
    // a later stale sum or an error-feedback residual would apply.
    bool pipedream = false;
    getOperation().walk([&](meta::CarryLoadOp) { pipedream = true; });
    if (pipedream && (lag > 0 || compression->withErrorFeedback())) {
      getOperation().emitError()
          << "the pipedream schedule (itself one iteration stale) does not "
             "combine with "
          << (lag > 0 ? "staleness " + std::to_string(lag)
                      : "compress = " + wire)
          << " yet";
      return signalPassFailure();
    }
    if (lag > 0 && failed(markStale(lag, chosen, wire)))
      return signalPassFailure();
    StringAttr algorithmAttr = StringAttr::get(&getContext(), chosen);
    StringAttr wireAttr = StringAttr::get(&getContext(), wire);
    // Reduce-scatters (ZeRO-2's gradients) go around the ring too.
    getOperation().walk([&](shard::ReduceScatterOp op) {
      if (chosen == "library")
        op->removeAttr(kAlgorithm);
      else
        op->setAttr(kAlgorithm, algorithmAttr);
    });
    getOperation().walk([&](shard::AllReduceOp op) {
      if (op->hasAttr(kStaleness))
        return;
      if (chosen == "library")
        op->removeAttr(kAlgorithm);
      else
        op->setAttr(kAlgorithm, algorithmAttr);
      // Error feedback keeps a residual per call site: for the outer
      // gradients, which every iteration computes again, only.
      bool compressed =
          compression->kind != meta::Compression::Kind::None &&
          isCompressible(op) &&
          (!compression->withErrorFeedback() || isOuterGradient(op)) &&
          (compression->kind != meta::Compression::Kind::PowerSGD ||
           factorizes(op, compression->parameter));
      if (compressed)
        op->setAttr(kCompress, wireAttr);
      else
        op->removeAttr(kCompress);
    });
  }
};

} // namespace
