//===- NNShapeChecks.h - checks shared by the nn verifiers -------*- C++
//-*-===//
//
// Shape checks used by the verifiers of the forward ops and of the ops their
// derivatives need. Every check reports through emitOpError and fails.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_DIALECT_NN_IR_NNSHAPECHECKS_H
#define METAC_LIB_DIALECT_NN_IR_NNSHAPECHECKS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>

namespace metac::nn::detail {

/// `[d0, d1, ...]`: how shapes appear in every message.
std::string shapeStr(llvm::ArrayRef<int64_t> shape);
llvm::ArrayRef<int64_t> shapeOf(mlir::Value v);
mlir::Type elementOf(mlir::Value v);

/// All float operands (null ones skipped) have the result's element type.
mlir::LogicalResult verifySameElementType(mlir::Operation *op,
                                          mlir::ValueRange values);
mlir::LogicalResult verifyResultShape(mlir::Operation *op,
                                      llvm::ArrayRef<int64_t> expected);
/// `what`'s shape is `expected` ("gradient shape [..] does not match ...").
mlir::LogicalResult verifyShapeOf(mlir::Operation *op, llvm::StringRef what,
                                  mlir::Value value,
                                  llvm::ArrayRef<int64_t> expected);

/// A weight `[P..., core...]` applies to an input `[B..., ...]` when `P...`
/// is a prefix of `B...` (`leadingInput`: the input's dimensions before its
/// own feature dimensions). Returns the number of batch dimensions P.
mlir::FailureOr<int64_t>
verifyWeightBatchPrefix(mlir::Operation *op, llvm::StringRef what,
                        llvm::ArrayRef<int64_t> weightShape,
                        int64_t weightCoreRank,
                        llvm::ArrayRef<int64_t> leadingInput);
mlir::LogicalResult verifyVectorParam(mlir::Operation *op, llvm::StringRef what,
                                      mlir::Value param,
                                      llvm::ArrayRef<int64_t> expected);
mlir::LogicalResult verifyPositivePair(mlir::Operation *op,
                                       llvm::StringRef name,
                                       llvm::ArrayRef<int64_t> values,
                                       int64_t minimum);
/// Sorted, distinct dimensions in [0, rank).
mlir::LogicalResult verifyDimensionList(mlir::Operation *op,
                                        llvm::StringRef name,
                                        llvm::ArrayRef<int64_t> dims,
                                        int64_t rank);
/// Output size of a window of `kernel` moved by `stride` over `size` padded
/// by `padding` on each side; fails when the window does not fit.
mlir::FailureOr<int64_t> windowOutput(mlir::Operation *op, int64_t size,
                                      int64_t kernel, int64_t stride,
                                      int64_t padding);

/// The output shape of a 2-D convolution of `input` `[B..., C, H, W]` with
/// `weight` `[P..., O, C, kh, kw]`, after checking ranks, channels, the
/// weight's batch prefix, strides and padding. `weightBatch` receives P.
mlir::FailureOr<llvm::SmallVector<int64_t>>
convolutionOutputShape(mlir::Operation *op, llvm::ArrayRef<int64_t> input,
                       llvm::ArrayRef<int64_t> weight,
                       llvm::ArrayRef<int64_t> stride,
                       llvm::ArrayRef<int64_t> padding, int64_t &weightBatch);

/// The output shape of 2-D pooling of `input` `[B..., C, H, W]`, after
/// checking the rank, kernel, stride and padding.
mlir::FailureOr<llvm::SmallVector<int64_t>>
poolingOutputShape(mlir::Operation *op, llvm::ArrayRef<int64_t> input,
                   llvm::ArrayRef<int64_t> kernel,
                   llvm::ArrayRef<int64_t> stride,
                   llvm::ArrayRef<int64_t> padding);

/// The output shape `[B..., S, E]` of attention of `query` `[B..., S, D]`
/// over `key` `[B..., T, D]` and `value` `[B..., T, E]`, after checking
/// ranks, batch dimensions, widths, lengths, causality and the scale.
mlir::FailureOr<llvm::SmallVector<int64_t>>
attentionOutputShape(mlir::Operation *op, llvm::ArrayRef<int64_t> query,
                     llvm::ArrayRef<int64_t> key, llvm::ArrayRef<int64_t> value,
                     bool causal, double scale);

/// Ring attention's `ring_axes`, when given: axes of metac's six-axis mesh,
/// at least one, in increasing order.
mlir::LogicalResult verifyRingAxes(mlir::Operation *op,
                                   std::optional<llvm::ArrayRef<int16_t>> axes);

} // namespace metac::nn::detail

#endif // METAC_LIB_DIALECT_NN_IR_NNSHAPECHECKS_H
