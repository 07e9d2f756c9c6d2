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
/// The CUDA kernels of fused groups (metac-generate-kernels with device):
/// the module's dictionary of PTX per device kernel, each group's launch
/// plan, and why none was compiled when none was.
/// Set on a module (by `metac --device-kernels=on`) to have
/// metac-generate-kernels compile CUDA kernels as with its `device` option.
inline constexpr llvm::StringLiteral kGenerateDeviceKernelsAttr =
    "metac.generate_device_kernels";
inline constexpr llvm::StringLiteral kDeviceKernelPrefix = "__metac_device_";
inline constexpr llvm::StringLiteral kDeviceKernelsAttr =
    "metac.device_kernels";
inline constexpr llvm::StringLiteral kDeviceKernelAttr = "metac.device";
inline constexpr llvm::StringLiteral kDeviceKernelsUnavailableAttr =
    "metac.device_kernels_unavailable";

#define GEN_PASS_DECL
#include "metac/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "metac/Conversion/Passes.h.inc"

} // namespace metac

#endif // METAC_CONVERSION_PASSES_H
