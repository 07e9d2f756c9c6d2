//===- DeviceLaunches.h - the runtime calls of generated CUDA kernels -*- C++
//-*-===//
//
// How NNToRuntime launches a fused group's CUDA kernels (its `metac.device`
// attribute, metac-generate-kernels with `device`): the module's PTX, the
// temporaries from the scratch arena, one metart_launch_device_kernel per
// launch.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CONVERSION_NNTORUNTIME_DEVICELAUNCHES_H
#define METAC_LIB_CONVERSION_NNTORUNTIME_DEVICELAUNCHES_H

#include "RuntimeCallEmitter.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include <utility>

namespace metac::lowering {

/// The PTX of a group's device kernels and the entry of its first launch
/// (null when `device`, its `metac.device` attribute, is malformed).
std::pair<mlir::StringAttr, mlir::StringAttr>
deviceModuleOf(nn::FusedOp op, mlir::DictionaryAttr device);

/// Emits the launches of the group's device kernels over `buffers` (the
/// data of its inputs, then of its results) and its temporaries.
mlir::LogicalResult emitDeviceLaunches(nn::FusedOp op,
                                       mlir::DictionaryAttr device,
                                       RuntimeCallEmitter &emit,
                                       llvm::ArrayRef<mlir::Value> buffers);

} // namespace metac::lowering

#endif // METAC_LIB_CONVERSION_NNTORUNTIME_DEVICELAUNCHES_H
