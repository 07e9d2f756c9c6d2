//===- TensorJSON.cpp - tensors as JSON -----------------------------------===//

#include "metac/Interpreter/TensorJSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace metac::interp;

/// A double as JSON that Python reads back to the same double.
static void printDouble(llvm::raw_ostream &os, double value) {
  if (std::isnan(value))
    os << "NaN";
  else if (std::isinf(value))
    os << (value > 0 ? "Infinity" : "-Infinity");
  else
    os << llvm::format("%.17g", value);
}

void metac::interp::printTensorJSON(llvm::raw_ostream &os,
                                    const Tensor &tensor) {
  os << "{\"shape\": [";
  llvm::interleaveComma(tensor.shape, os);
  os << "], \"integer\": " << (tensor.isInteger ? "true" : "false")
     << ", \"values\": [";
  if (tensor.isInteger)
    llvm::interleaveComma(tensor.ints, os);
  else
    llvm::interleaveComma(tensor.values, os,
                          [&](double value) { printDouble(os, value); });
  os << "]}";
}

/// Prints `"name": [...]`, one tensor per line.
static void printTensorList(llvm::raw_ostream &os, llvm::StringRef name,
                            llvm::ArrayRef<Tensor> tensors) {
  os << "  \"" << name << "\": [";
  llvm::interleave(
      tensors, os,
      [&](const Tensor &tensor) {
        os << "\n    ";
        printTensorJSON(os, tensor);
      },
      ",");
  os << (tensors.empty() ? "]" : "\n  ]");
}

void metac::interp::printEvaluationJSON(llvm::raw_ostream &os,
                                        llvm::ArrayRef<Tensor> inputs,
                                        llvm::ArrayRef<Tensor> outputs) {
  os << "{\n";
  printTensorList(os, "inputs", inputs);
  os << ",\n";
  printTensorList(os, "outputs", outputs);
  os << "\n}\n";
}
