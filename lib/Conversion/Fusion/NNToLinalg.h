//===- NNToLinalg.h - nn ops of a fusion group as linalg.generic -*- C++
//-*-===//
//
// The body of a generated kernel: each fusible nn op (nn::FusedOp::
// isFusible) as one `linalg.generic` on tensors, with the scalar formula
// of the runtime's kernel (runtime/src/cpu/Elementwise.cpp), so that
// upstream linalg fusion can merge producers into consumers.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CONVERSION_FUSION_NNTOLINALG_H
#define METAC_LIB_CONVERSION_FUSION_NNTOLINALG_H

#include "mlir/IR/Builders.h"

namespace metac::fusion {

/// The linalg form of the fusible `op` applied to `operands`, with result
/// type `type` (the op's own, or a slice of it along the leading
/// dimension): its result.
mlir::Value buildLinalg(mlir::OpBuilder &b, mlir::Operation *op,
                        mlir::ValueRange operands, mlir::Type type);

} // namespace metac::fusion

#endif // METAC_LIB_CONVERSION_FUSION_NNTOLINALG_H
