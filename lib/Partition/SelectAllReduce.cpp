//===- SelectAllReduce.cpp - the algorithm of every all-reduce ------------===//

#include "metac/Partition/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace metac::partition {
#define GEN_PASS_DEF_METASELECTALLREDUCE
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

struct SelectAllReduce
    : partition::impl::MetaSelectAllReduceBase<SelectAllReduce> {
  using Base::Base;

  void runOnOperation() override {
    if (algorithm != "library" && algorithm != "ring" && algorithm != "tree" &&
        algorithm != "hierarchical") {
      getOperation().emitError()
          << "unknown all-reduce algorithm '" << algorithm
          << "' (expected library, ring, tree or hierarchical)";
      return signalPassFailure();
    }
    if (compress != "none" && compress != "bf16" && compress != "fp16") {
      getOperation().emitError()
          << "unknown all-reduce compression '" << compress
          << "' (expected none, bf16 or fp16)";
      return signalPassFailure();
    }
    StringAttr choice = StringAttr::get(&getContext(), algorithm);
    StringAttr wire = StringAttr::get(&getContext(), compress);
    getOperation().walk([&](shard::AllReduceOp op) {
      if (algorithm == "library")
        op->removeAttr(kAlgorithm);
      else
        op->setAttr(kAlgorithm, choice);
      if (compress != "none" && isCompressible(op))
        op->setAttr(kCompress, wire);
      else
        op->removeAttr(kCompress);
    });
  }

  /// Gradient sums: f32 or f64 sums that do not span the tensor axis.
  static bool isCompressible(shard::AllReduceOp op) {
    Type element = cast<RankedTensorType>(op.getType()).getElementType();
    return op.getReduction() == shard::ReductionKind::Sum &&
           (element.isF32() || element.isF64()) &&
           !llvm::is_contained(op.getGridAxes(), kTensorAxis);
  }

  static constexpr llvm::StringLiteral kAlgorithm = "metac.allreduce";
  static constexpr llvm::StringLiteral kCompress = "metac.compress";
  static constexpr int16_t kTensorAxis = 2; // task, data, tensor, pipeline
};

} // namespace
