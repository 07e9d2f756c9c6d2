//===- TensorJSON.h - tensors as JSON ---------------------------*- C++ -*-===//
//
// The JSON that `metac-eval` prints, for other tools (the PyTorch reference
// checks) to read:
//   {"inputs": [T, ...], "outputs": [T, ...]}
// with each tensor T as {"shape": [d0, ...], "integer": false,
// "values": [v0, ...]}, values row-major. Floats are printed with `%.17g`,
// which round-trips every double; non-finite values as NaN, Infinity and
// -Infinity, as Python's json module reads and writes them.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_INTERPRETER_TENSORJSON_H
#define METAC_INTERPRETER_TENSORJSON_H

#include "metac/Interpreter/Interpreter.h"

#include "llvm/Support/raw_ostream.h"

namespace metac::interp {

/// Prints one tensor as a JSON object.
void printTensorJSON(llvm::raw_ostream &os, const Tensor &tensor);

/// Prints `{"inputs": [...], "outputs": [...]}`, one tensor per line.
void printEvaluationJSON(llvm::raw_ostream &os, llvm::ArrayRef<Tensor> inputs,
                         llvm::ArrayRef<Tensor> outputs);

} // namespace metac::interp

#endif // METAC_INTERPRETER_TENSORJSON_H
