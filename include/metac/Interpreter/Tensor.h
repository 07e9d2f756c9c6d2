//===- Tensor.h - the interpreter's tensor values ---------------*- C++ -*-===//
//
// The values of the reference interpreter (Interpreter.h), apart so that
// its kernels need not see the interpreter itself.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_INTERPRETER_TENSOR_H
#define METAC_INTERPRETER_TENSOR_H

#include "mlir/IR/Types.h"

#include <cstdint>
#include <vector>

namespace metac::interp {

/// A dense, row-major tensor value. Float tensors keep their elements in
/// `values`, integer tensors (`isInteger`) in `ints`; the other vector is
/// empty.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<double> values;
  std::vector<int64_t> ints;
  bool isInteger = false;

  /// The product of the dimensions (1 for a 0-d tensor).
  int64_t numElements() const;
};

/// The most elements the interpreter allocates for one tensor (2^28, 2 GiB
/// of doubles); larger tensors are reported as unsupported.
inline constexpr int64_t kMaxElements = int64_t(1) << 28;

/// Whether the interpreter represents values of `type`: statically shaped
/// ranked tensors of floats (any width, computed as doubles) or integers
/// (kept as int64) of at most kMaxElements elements.
bool isSupportedType(mlir::Type type);

} // namespace metac::interp

#endif // METAC_INTERPRETER_TENSOR_H
