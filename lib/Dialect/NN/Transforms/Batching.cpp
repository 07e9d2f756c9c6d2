//===- Batching.cpp - vectorising nn ops over a new leading axis ----------===//
//
// Most ops vectorise by prepending the axis to every operand and the result.
// Weighted layers keep unbatched weights shared (their verifiers accept
// weights whose batch dimensions prefix the input's), and ops with dimension
// attributes shift them by one.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/NN/Transforms/Batching.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace metac::nn;

static RankedTensorType prepend(Type type, int64_t size) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape{size};
  llvm::append_range(shape, tensor.getShape());
  return RankedTensorType::get(shape, tensor.getElementType());
}

static SmallVector<int64_t> shifted(ArrayRef<int64_t> dims) {
  return llvm::map_to_vector(dims, [](int64_t d) { return d + 1; });
}

FailureOr<Value> metac::nn::ensureBatched(OpBuilder &b, Location loc,
                                          BatchedValue v, int64_t size) {
  if (v.batched)
    return v.value;
  auto type = cast<RankedTensorType>(v.value.getType());
  if (!isa<FloatType>(type.getElementType())) {
    // Integer constants (position ids beside per-task tables) are
    // repeated: nn.broadcast is for floats.
    DenseElementsAttr ints;
    if (matchPattern(v.value, m_Constant(&ints))) {
      RankedTensorType batched = prepend(type, size);
      if (ints.isSplat())
        return arith::ConstantOp::create(b, loc, batched,
                                         ints.resizeSplat(batched))
            .getResult();
      SmallVector<APInt> values;
      for (int64_t i = 0; i < size; ++i)
        llvm::append_range(values, ints.getValues<APInt>());
      return arith::ConstantOp::create(b, loc, batched,
                                       DenseElementsAttr::get(batched, values))
          .getResult();
    }
    return emitError(loc, "cannot give an integer tensor a batch axis by "
                          "broadcasting (")
           << type << ")";
  }
  return BroadcastOp::create(b, loc, prepend(type, size), v.value,
                             b.getDenseI64ArrayAttr({0}))
      .getResult();
}

namespace {

/// Which operands of a weighted layer are the input and which the weights.
struct LayerOperands {
  SmallVector<unsigned> inputs, weights;
};

std::optional<LayerOperands> layerOperands(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<LayerOperands>>(op)
      .Case<LinearOp, Conv2DOp, LayerNormOp, BatchNormOp>([](auto) {
        return LayerOperands{{0}, {1, 2}};
      })
      .Case<Conv2DBackwardInputOp, EmbeddingOp>([](auto) {
        return LayerOperands{{0}, {1}};
      })
      .Default([](Operation *) { return std::nullopt; });
}

} // namespace

FailureOr<BatchedValue> metac::nn::batchOp(OpBuilder &b, Operation *op,
                                           ArrayRef<BatchedValue> operands,
                                           int64_t size, BatchAxis axis) {
  Location loc = op->getLoc();
  IRMapping mapping;
  auto cloneWith = [&](ArrayRef<Value> values) {
    for (auto [old, v] : llvm::zip(op->getOperands(), values))
      mapping.map(old, v);
    return b.clone(*op, mapping);
  };

  if (llvm::none_of(operands, [](BatchedValue v) { return v.batched; })) {
    SmallVector<Value> values =
        llvm::map_to_vector(operands, [](BatchedValue v) { return v.value; });
    return BatchedValue{cloneWith(values)->getResult(0), false};
  }
  if (op->getNumResults() != 1 || op->getNumRegions() != 0 ||
      op->getDialect()->getNamespace() != "nn")
    return op->emitOpError("has no batching rule (vectorising over ")
           << (axis == BatchAxis::Samples ? "samples" : "tasks") << ")";

  // Operands: weighted layers keep unbatched weights shared unless some
  // weight is batched; every other op takes all operands batched.
  SmallVector<Value> values;
  std::optional<LayerOperands> layer = layerOperands(op);
  bool batchAll = !layer || llvm::any_of(layer->weights, [&](unsigned i) {
    return i < operands.size() && operands[i].batched;
  });
  for (auto [i, v] : llvm::enumerate(operands)) {
    if (!v.value) {
      values.push_back(v.value);
      continue;
    }
    bool isInput = layer && llvm::is_contained(layer->inputs, i);
    if (batchAll || isInput) {
      FailureOr<Value> batched = ensureBatched(b, loc, v, size);
      if (failed(batched))
        return failure();
      values.push_back(*batched);
    } else {
      values.push_back(v.value);
    }
  }

  Operation *clone = cloneWith(values);
  clone->getResult(0).setType(prepend(op->getResult(0).getType(), size));
  // Dimension attributes move with the new leading axis.
  llvm::TypeSwitch<Operation *>(clone)
      .Case<SoftmaxOp, LogSoftmaxOp>(
          [&](auto o) { o.setAxisAttr(b.getI64IntegerAttr(o.getAxis() + 1)); })
      .Case<TransposeOp>([&](TransposeOp o) {
        SmallVector<int64_t> perm{0};
        llvm::append_range(perm, shifted(o.getPermutation()));
        o.setPermutation(perm);
      })
      .Case<BroadcastOp, ReduceSumOp, ReduceMeanOp>(
          [&](auto o) { o.setDimensions(shifted(o.getDimensions())); })
      .Case<MSELossOp, CrossEntropyLossOp, AccuracyOp>([&](auto o) {
        o.setBatchRankAttr(b.getI64IntegerAttr(o.getBatchRank() + 1));
      })
      .Case<BatchNormOp>([&](BatchNormOp o) {
        SmallVector<int64_t> reduce;
        if (axis == BatchAxis::Samples)
          reduce.push_back(0);
        llvm::append_range(reduce, shifted(o.getReduceDims()));
        o.setReduceDims(reduce);
        o.setChannelDimAttr(b.getI64IntegerAttr(o.getChannelDim() + 1));
      });
  // Reshapes keep the axis as is: their result type already says so.
  if (failed(mlir::verify(clone)))
    return failure();
  return BatchedValue{clone->getResult(0), true};
}
