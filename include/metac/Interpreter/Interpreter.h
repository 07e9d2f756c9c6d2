//===- Interpreter.h - reference interpreter for nn programs ----*- C++ -*-===//
//
// A reference interpreter for functions over `nn` ops: naive loops that
// follow the op descriptions in NNOps.td literally, computing in double
// precision whatever the element type (f16, bf16 and f32 values are computed
// as doubles) and keeping integer tensors as int64. It is the oracle that
// finite-difference checks of the autodiff and checks of runtime kernels
// compare against, so it favours obviously correct code over speed.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_INTERPRETER_INTERPRETER_H
#define METAC_INTERPRETER_INTERPRETER_H

#include "metac/Interpreter/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <vector>

namespace metac::interp {

/// Evaluates `func` on `inputs` (one per argument, with the argument's shape,
/// integer exactly when the argument's element type is). Supports every nn
/// op, `arith.constant` (dense, splat or not, float or integer), `func.return`
/// and `func.call` of other functions of the same module. Unsupported ops and
/// runtime errors (an embedding id or a label out of range, ...) are reported
/// with emitError at the op's location, and the result is failure.
mlir::FailureOr<std::vector<Tensor>> evaluate(mlir::func::FuncOp func,
                                              llvm::ArrayRef<Tensor> inputs);

} // namespace metac::interp

#endif // METAC_INTERPRETER_INTERPRETER_H
