//===- DecomposeNorms.h - batch norm as reductions and maps -----*- C++ -*-===//

#ifndef METAC_DIALECT_NN_TRANSFORMS_DECOMPOSENORMS_H
#define METAC_DIALECT_NN_TRANSFORMS_DECOMPOSENORMS_H

#include "metac/Dialect/NN/IR/NNOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace metac::nn {

/// Replaces every batch norm under `root` that averages over some dimension
/// and that `wanted` accepts by the reductions and elementwise ops it stands
/// for (DecomposeNorms.cpp).
void decomposeBatchNorms(mlir::Operation *root,
                         llvm::function_ref<bool(BatchNormOp)> wanted);

} // namespace metac::nn

#endif // METAC_DIALECT_NN_TRANSFORMS_DECOMPOSENORMS_H
