//===- GeneratedKernels.h - kernels metac generated, loaded from PTX -*- C++
//-*-===//
//
// metac compiles fused groups into PTX (one module per group kernel,
// embedded in the program as a constant string). The driver compiles each
// module for the device the first time it is launched; its kernels are
// then found by name and launched on the context's stream, where CUDA
// graphs record them like the runtime's own kernels.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_GENERATEDKERNELS_H
#define METART_SRC_CUDA_GENERATEDKERNELS_H

#include "../Backend.h"

#include <cuda_runtime.h>

#include <map>
#include <set>
#include <string>
#include <utility>

namespace metart::cuda {

/// The loaded PTX modules and their kernels, by the module's address (a
/// program's constant) and the kernel's name.
class GeneratedKernels {
public:
  GeneratedKernels() = default;
  GeneratedKernels(const GeneratedKernels &) = delete;
  GeneratedKernels &operator=(const GeneratedKernels &) = delete;
  ~GeneratedKernels();

  /// Launches `entry` of `ptx` on `stream`; loads the module first if
  /// needed (also while a graph is being captured: loading is no stream
  /// work).
  KernelStatus launch(cudaStream_t stream, const char *ptx, const char *entry,
                      int64_t blocks, int64_t threads, void **pointers,
                      int64_t count);

  /// Whether `entry` of `ptx` loads (a failure is remembered: the driver
  /// compiles the PTX once).
  bool loads(const char *ptx, const char *entry);

private:
  KernelStatus kernelOf(const char *ptx, const char *entry,
                        cudaKernel_t &kernel);

  std::map<const char *, cudaLibrary_t> libraries;
  std::map<std::pair<const char *, std::string>, cudaKernel_t> kernels;
  std::set<const char *> unloadable;
};

} // namespace metart::cuda

#endif // METART_SRC_CUDA_GENERATEDKERNELS_H
