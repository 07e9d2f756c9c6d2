//===- GeneratedKernels.cpp - kernels metac generated, loaded from PTX ----===//

#include "GeneratedKernels.h"

#include "Status.h"

#include <vector>

using namespace metart;
using namespace metart::cuda;

GeneratedKernels::~GeneratedKernels() {
  for (auto &[ptx, library] : libraries)
    (void)cudaLibraryUnload(library);
}

KernelStatus GeneratedKernels::kernelOf(const char *ptx, const char *entry,
                                        cudaKernel_t &kernel) {
  auto key = std::make_pair(ptx, std::string(entry));
  if (auto found = kernels.find(key); found != kernels.end()) {
    kernel = found->second;
    return KernelStatus::ok();
  }
  auto library = libraries.find(ptx);
  if (library == libraries.end()) {
    // Loading compiles the PTX; it is no stream work, so a capture in
    // progress (CUDA graphs) may go on around it.
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    cudaLibrary_t loaded = nullptr;
    cudaError_t error = cudaLibraryLoadData(&loaded, ptx, nullptr, nullptr, 0,
                                            nullptr, nullptr, 0);
    (void)cudaThreadExchangeStreamCaptureMode(&mode);
    if (KernelStatus status =
            checkCuda(error, std::string("cudaLibraryLoadData (the PTX of ") +
                                 entry + ")");
        status.failed())
      return status;
    library = libraries.emplace(ptx, loaded).first;
  }
  if (KernelStatus status =
          checkCuda(cudaLibraryGetKernel(&kernel, library->second, entry),
                    std::string("cudaLibraryGetKernel(") + entry + ")");
      status.failed())
    return status;
  kernels.emplace(std::move(key), kernel);
  return KernelStatus::ok();
}

bool GeneratedKernels::loads(const char *ptx, const char *entry) {
  if (unloadable.count(ptx))
    return false;
  cudaKernel_t kernel = nullptr;
  if (!kernelOf(ptx, entry, kernel).failed())
    return true;
  unloadable.insert(ptx);
  (void)cudaGetLastError();
  return false;
}

KernelStatus GeneratedKernels::launch(cudaStream_t stream, const char *ptx,
                                      const char *entry, int64_t blocks,
                                      int64_t threads, void **pointers,
                                      int64_t count) {
  if (blocks < 1 || threads < 1 || threads > 1024 || blocks > 0x7fffffff)
    return {METART_ERROR_INVALID_ARGUMENT,
            "a generated kernel's grid of " + std::to_string(blocks) +
                " blocks of " + std::to_string(threads) +
                " threads cannot be launched"};
  cudaKernel_t kernel = nullptr;
  if (KernelStatus status = kernelOf(ptx, entry, kernel); status.failed())
    return status;
  // Each argument is a pointer; the launch reads each through its address.
  std::vector<void *> arguments(count);
  for (int64_t i = 0; i < count; ++i)
    arguments[i] = &pointers[i];
  if (KernelStatus status =
          checkCuda(cudaLaunchKernel(reinterpret_cast<const void *>(kernel),
                                     dim3(static_cast<unsigned>(blocks)),
                                     dim3(static_cast<unsigned>(threads)),
                                     arguments.data(), 0, stream),
                    std::string("cudaLaunchKernel(") + entry + ")");
      status.failed())
    return status;
  return KernelStatus::ok();
}
