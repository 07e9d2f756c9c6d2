//===- Passes.h - meta dialect passes ---------------------------*- C++ -*-===//

#ifndef METAC_DIALECT_META_TRANSFORMS_PASSES_H
#define METAC_DIALECT_META_TRANSFORMS_PASSES_H

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Pass/Pass.h"

namespace metac::meta {

#define GEN_PASS_DECL
#include "metac/Dialect/Meta/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "metac/Dialect/Meta/Transforms/Passes.h.inc"

/// Expands one gradient request (whose body holds no other request) into
/// forward and reverse-mode ops at its position; reports and fails on
/// non-differentiable ops.
mlir::LogicalResult expandGrad(GradOp grad);

} // namespace metac::meta

#endif // METAC_DIALECT_META_TRANSFORMS_PASSES_H
