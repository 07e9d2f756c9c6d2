//===- Passes.h - metac conversion passes -----------------------*- C++ -*-===//

#ifndef METAC_CONVERSION_PASSES_H
#define METAC_CONVERSION_PASSES_H

#include "metac/Dialect/NN/IR/NNDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace metac {

/// metac-generate-kernels names its kernels with this prefix and a number;
/// convert-nn-to-runtime calls each through `<kernel>` + the thunk suffix.
/// The JIT compiles the kernels (not the thunks) in a module of their own.
inline constexpr llvm::StringLiteral kFusedKernelPrefix = "__metac_kernel_";
inline constexpr llvm::StringLiteral kFusedKernelThunkSuffix = "_thunk";

#define GEN_PASS_DECL
#include "metac/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "metac/Conversion/Passes.h.inc"

} // namespace metac

#endif // METAC_CONVERSION_PASSES_H
