//===- TensorUtils.h - shapes and indices of interpreter tensors -*- C++
//-*-===//
//
// Helpers shared by the interpreter's kernels: element counts, row-major
// multi-index iteration and flattening, and tensor construction.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_INTERPRETER_TENSORUTILS_H
#define METAC_LIB_INTERPRETER_TENSORUTILS_H

#include "metac/Interpreter/Tensor.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace metac::interp::detail {

/// The product of `dims` (1 when empty).
int64_t product(llvm::ArrayRef<int64_t> dims);

/// The static shape of `value`'s ranked tensor type.
llvm::ArrayRef<int64_t> shapeOf(mlir::Value value);

/// A float tensor of `shape` filled with zeros.
Tensor zeros(llvm::ArrayRef<int64_t> shape);

/// Calls `fn(index, flat)` for every multi-index of `shape` in row-major
/// order, `flat` being the index's row-major position.
void forEachIndex(
    llvm::ArrayRef<int64_t> shape,
    llvm::function_ref<void(llvm::ArrayRef<int64_t>, int64_t)> fn);

/// The row-major position of `index` in `shape`.
int64_t flatIndex(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> index);

/// `index` without the (sorted) dimensions `dims`.
llvm::SmallVector<int64_t> dropDims(llvm::ArrayRef<int64_t> index,
                                    llvm::ArrayRef<int64_t> dims);

/// Rounds every value of `tensor` to the float type `element` (to nearest,
/// ties to even), as a store of that type would.
void roundTo(Tensor &tensor, mlir::Type element);

/// Checks that the integer `value` (an id or a label) lies in `[0, bound)`;
/// otherwise reports "<what> <value> is out of range [0, <bound>)" at `op`.
mlir::LogicalResult checkIndex(mlir::Operation *op, llvm::StringRef what,
                               int64_t value, int64_t bound);

} // namespace metac::interp::detail

#endif // METAC_LIB_INTERPRETER_TENSORUTILS_H
