//===- RuntimeEvaluator.h - nn functions on the runtime's kernels -*- C++
//-*-===//
//
// Runs a function of nn ops with one runtime call per op, so that its
// results can be compared with the reference interpreter's: a miniature of
// what the lowering to runtime calls will generate.
//
//===----------------------------------------------------------------------===//

#ifndef METART_TEST_RUNTIMEEVALUATOR_H
#define METART_TEST_RUNTIMEEVALUATOR_H

#include "metac/Interpreter/Interpreter.h"
#include "metart/metart.h"

#include <string>
#include <vector>

namespace metart::test {

/// Whether `func` has a body of nn ops and `arith.constant`s over tensors of
/// f32, f64, i32 or i64, ending in `func.return`: what
/// `evaluateWithRuntime` runs.
bool isRunnable(mlir::func::FuncOp func);

/// Evaluates `func` (runnable) on `inputs` on `context`: the inputs are
/// copied to scratch memory, each op's result is allocated there and
/// computed by the op's kernel (a splat constant by `metart_fill`, reshape
/// and stop_gradient by a device copy), and the returned values are copied
/// back as the interpreter represents them. The scratch memory is reset
/// afterwards. On failure, `error` names the op and holds the runtime's
/// message.
mlir::FailureOr<std::vector<metac::interp::Tensor>>
evaluateWithRuntime(metart_context *context, mlir::func::FuncOp func,
                    llvm::ArrayRef<metac::interp::Tensor> inputs,
                    std::string &error);

} // namespace metart::test

#endif // METART_TEST_RUNTIMEEVALUATOR_H
