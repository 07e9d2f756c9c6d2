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

/// An inner step of a gradient request's body: the ops just before and
/// just after its own gradient request (null at the body's start).
struct StepBounds {
  mlir::Operation *before = nullptr;
  mlir::Operation *after = nullptr;
};

/// Expands one gradient request (whose body holds no other request) into
/// forward and reverse-mode ops at its position; reports and fails on
/// non-differentiable ops. With `steps` (its body's inner steps, their
/// requests expanded already) and `rematSegments` other than 0 or 1, the
/// forward is cut after inner steps into that many segments (-1: about the
/// square root of the steps) and the reverse sweep computes every segment
/// but the last again instead of keeping its values.
mlir::LogicalResult expandGrad(GradOp grad,
                               llvm::ArrayRef<StepBounds> steps = {},
                               int64_t rematSegments = 0);

} // namespace metac::meta

#endif // METAC_DIALECT_META_TRANSFORMS_PASSES_H
