//===- Status.cpp - CUDA and cuBLAS errors as kernel statuses -------------===//

#include "Status.h"

namespace metart::cuda {

KernelStatus checkCuda(cudaError_t error, const std::string &call) {
  if (error == cudaSuccess)
    return KernelStatus::ok();
  // Reset the runtime's last error, so that the next launch check does not
  // report this failure again (sticky errors stay regardless).
  (void)cudaGetLastError();
  metart_status code = error == cudaErrorMemoryAllocation
                           ? METART_ERROR_OUT_OF_MEMORY
                           : METART_ERROR_BACKEND;
  return {code, call + " failed: " + cudaGetErrorString(error) + " (" +
                    cudaGetErrorName(error) + ")"};
}

KernelStatus checkCublas(cublasStatus_t status, const std::string &call) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return KernelStatus::ok();
  metart_status code = status == CUBLAS_STATUS_ALLOC_FAILED
                           ? METART_ERROR_OUT_OF_MEMORY
                           : METART_ERROR_BACKEND;
  return {code, call + " failed: " + cublasGetStatusString(status) + " (" +
                    cublasGetStatusName(status) + ")"};
}

KernelStatus checkLaunch(const char *kernel) {
  return checkCuda(cudaGetLastError(),
                   std::string("launching the ") + kernel + " kernel");
}

KernelStatus workspaceExhausted(size_t bytes) {
  return {METART_ERROR_OUT_OF_MEMORY, "cannot allocate a device workspace of " +
                                          std::to_string(bytes) + " bytes"};
}

} // namespace metart::cuda
