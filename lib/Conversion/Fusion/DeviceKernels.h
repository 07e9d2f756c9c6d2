//===- DeviceKernels.h - compile fused groups into CUDA kernels -*- C++ -*-===//
//
// The CUDA half of `metac-generate-kernels`: the same kernels on tensors
// that the host path compiles into loops become GPU kernels through
// upstream MLIR only (bufferisation, linalg to parallel loops, the
// parallel loops mapped to blocks and threads, kernel outlining, gpu to
// nvvm, NVPTX), and the runtime launches them on its stream.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CONVERSION_FUSION_DEVICEKERNELS_H
#define METAC_LIB_CONVERSION_FUSION_DEVICEKERNELS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace metac::fusion {

/// One kernel launch: its PTX entry, grid and block (one dimension each),
/// and its pointer arguments as indices into the group's buffers (inputs,
/// then results, then temporaries).
struct DeviceLaunch {
  std::string entry;
  int64_t blocks = 0;
  int64_t threads = 0;
  llvm::SmallVector<int64_t> arguments;
};

/// How the runtime runs one group on the device: launches in order, over
/// temporaries of the given sizes in bytes.
struct DeviceKernel {
  llvm::SmallVector<DeviceLaunch> launches;
  llvm::SmallVector<int64_t> temporaryBytes;
  /// The PTX module that holds the launches' entries.
  std::string ptx;
};

/// What compiling a module of kernels for the device gave.
struct DeviceKernels {
  /// Per kernel function name; kernels that the lowering does not cover
  /// (a long sum it cannot spread over a block's threads, say) are
  /// missing: their groups run op by op.
  llvm::StringMap<DeviceKernel> kernels;
  /// Why no kernel was compiled, when none was (no CUDA toolkit for
  /// libdevice, say).
  std::string unavailable;
};

/// The dialects, lowering interfaces and LLVM translations the device
/// pipeline needs.
void registerDeviceKernelDialects(mlir::DialectRegistry &registry);

/// Runs a pass pipeline on an operation (the calling pass's runPipeline).
using PipelineRunner = llvm::function_ref<mlir::LogicalResult(
    mlir::OpPassManager &, mlir::Operation *)>;

/// Compiles the functions of `kernels` (`func.func` on tensors whose
/// results are materialised into their trailing arguments, after fusion)
/// for CUDA GPUs. `kernels` is consumed.
DeviceKernels compileDeviceKernels(mlir::ModuleOp kernels,
                                   PipelineRunner runPipeline);

} // namespace metac::fusion

#endif // METAC_LIB_CONVERSION_FUSION_DEVICEKERNELS_H
