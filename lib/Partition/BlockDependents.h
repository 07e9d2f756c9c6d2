//===- BlockDependents.h - what depends on what, in straight-line code ----===//

#ifndef METAC_LIB_PARTITION_BLOCKDEPENDENTS_H
#define METAC_LIB_PARTITION_BLOCKDEPENDENTS_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace metac::partition {

/// The ops of `block` that use, directly or transitively, one of `seeds`,
/// in block order. Ops for which `stop` holds are neither included nor
/// propagated through. One pass over the block, which is exact for the
/// straight-line functions of the phases after autodiff.
inline llvm::SetVector<mlir::Operation *>
getDependents(mlir::Block &block, mlir::ValueRange seeds,
              llvm::function_ref<bool(mlir::Operation *)> stop = nullptr) {
  llvm::DenseSet<mlir::Value> tainted(seeds.begin(), seeds.end());
  llvm::SetVector<mlir::Operation *> dependents;
  for (mlir::Operation &op : block) {
    if (stop && stop(&op))
      continue;
    bool uses = false;
    op.walk([&](mlir::Operation *nested) {
      for (mlir::Value operand : nested->getOperands())
        uses |= tainted.contains(operand);
    });
    if (!uses)
      continue;
    dependents.insert(&op);
    for (mlir::Value result : op.getResults())
      tainted.insert(result);
  }
  return dependents;
}

} // namespace metac::partition

#endif // METAC_LIB_PARTITION_BLOCKDEPENDENTS_H
