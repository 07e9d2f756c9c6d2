//===- Status.h - CUDA and cuBLAS errors as kernel statuses -----*- C++ -*-===//
//
// Every call into the CUDA runtime or cuBLAS is checked; a failure becomes a
// KernelStatus whose message names the call and the library's description
// of the error, so that the dispatch layer can report "metart_nn_linear:
// cublasSgemmStridedBatched failed: ...". Running out of device memory is
// METART_ERROR_OUT_OF_MEMORY, any other failure METART_ERROR_BACKEND.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_STATUS_H
#define METART_SRC_CUDA_STATUS_H

#include "../Tensor.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

namespace metart::cuda {

/// OK for cudaSuccess, otherwise the failure of the runtime call `call`
/// (whose error it also clears from the runtime's last error).
KernelStatus checkCuda(cudaError_t error, const std::string &call);

/// OK for CUBLAS_STATUS_SUCCESS, otherwise the failure of `call`.
KernelStatus checkCublas(cublasStatus_t status, const std::string &call);

/// The status of the last kernel launch; `kernel` names the kernel.
KernelStatus checkLaunch(const char *kernel);

/// The failure of a kernel that could not get `bytes` bytes of device
/// workspace.
KernelStatus workspaceExhausted(size_t bytes);

} // namespace metart::cuda

#endif // METART_SRC_CUDA_STATUS_H
