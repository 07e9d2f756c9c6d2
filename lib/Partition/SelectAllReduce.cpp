//===- SelectAllReduce.cpp - the algorithm of every all-reduce ------------===//

#include "metac/Partition/Passes.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"

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
constexpr int16_t kTensorAxis = 2; // task, data, tensor, pipeline

/// Gradient sums: f32 or f64 sums that do not span the tensor axis (whose
/// all-reduces add a split layer's partial results).
bool isCompressible(shard::AllReduceOp op) {
  Type element = cast<RankedTensorType>(op.getType()).getElementType();
  return op.getReduction() == shard::ReductionKind::Sum &&
         (element.isF32() || element.isF64()) &&
         !llvm::is_contained(op.getGridAxes(), kTensorAxis);
}

struct SelectAllReduce
    : partition::impl::MetaSelectAllReduceBase<SelectAllReduce> {
  using Base::Base;

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
    if (wire != "none" && wire != "bf16" && wire != "fp16") {
      getOperation().emitError() << "unknown all-reduce compression '" << wire
                                 << "' (expected none, bf16 or fp16)";
      return signalPassFailure();
    }
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
      if (chosen == "library")
        op->removeAttr(kAlgorithm);
      else
        op->setAttr(kAlgorithm, algorithmAttr);
      if (wire != "none" && isCompressible(op))
        op->setAttr(kCompress, wireAttr);
      else
        op->removeAttr(kCompress);
    });
  }
};

} // namespace
