//===- MetaAttrs.h - meta dialect attributes --------------------*- C++ -*-===//

#ifndef METAC_DIALECT_META_IR_METAATTRS_H
#define METAC_DIALECT_META_IR_METAATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include <array>

#include "metac/Dialect/Meta/IR/MetaEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "metac/Dialect/Meta/IR/MetaAttrs.h.inc"

namespace metac::meta {

/// Number of optimizer state tensors per parameter tensor, and whether a
/// shared step counter follows them.
struct OptimizerStateLayout {
  unsigned perParam = 0;
  bool stepCounter = false;
};

/// The state layout of an outer optimizer attribute (SGD, Adam or AdamW).
OptimizerStateLayout getOptimizerStateLayout(mlir::Attribute optimizer);

/// Marks the step function's loss-scale argument (a scalar after the
/// optimizer state) when its train scales the loss dynamically.
inline constexpr llvm::StringLiteral kLossScaleAttrName = "meta.loss_scale";

} // namespace metac::meta

#endif // METAC_DIALECT_META_IR_METAATTRS_H
