//===- Batching.h - vectorising nn ops over a new leading axis ---*- C++
//-*-===//
//
// The rules that give an nn op a new leading batch axis, as JAX's vmap does:
// per-sample model code applied to a set of samples (the `expand` phase),
// and per-task programs applied to a batch of tasks (the `batched` phase).
// A value either has the new axis or is the same for every batch element.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_DIALECT_NN_TRANSFORMS_BATCHING_H
#define METAC_DIALECT_NN_TRANSFORMS_BATCHING_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace metac::nn {

/// The axis being added. They differ only for batch norm: its statistics
/// cover the sample axis (samples are coupled) but not the task axis.
enum class BatchAxis { Samples, Tasks };

/// A value of the vectorised program and whether it carries the new axis.
struct BatchedValue {
  mlir::Value value;
  bool batched = false;
};

/// Emits, at the builder, `op` (an nn op or arith.constant) applied to
/// `operands` with a new leading axis of `size`; operands without the axis
/// are broadcast where the op needs them to have it. Reports at the op and
/// fails for ops without a batching rule.
mlir::FailureOr<BatchedValue> batchOp(mlir::OpBuilder &builder,
                                      mlir::Operation *op,
                                      llvm::ArrayRef<BatchedValue> operands,
                                      int64_t size, BatchAxis axis);

/// `value` with the new leading axis (broadcast when it has none).
mlir::FailureOr<mlir::Value> ensureBatched(mlir::OpBuilder &builder,
                                           mlir::Location loc,
                                           BatchedValue value, int64_t size);

} // namespace metac::nn

#endif // METAC_DIALECT_NN_TRANSFORMS_BATCHING_H
