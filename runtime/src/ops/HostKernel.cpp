//===- HostKernel.cpp - kernels that metac generated ----------------------===//
//
// metac compiles groups of elementwise, broadcast and sum ops into kernels
// of its own (the `fused` phase); compiled code calls them through here, so
// that they run only where tensors live in host memory, on the CPU
// backend's threads (one slice of the results per call), and the profile
// times them like the runtime's kernels; on CUDA, the same groups compiled
// to PTX are launched on the context's stream.
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "../Tensor.h"
#include "../cpu/Parallel.h"

#include <cstdlib>
#include <string>

using namespace metart;

/// METART_FUSED_KERNELS=off runs every group op by op, as on a device
/// backend: to compare, and to test that path without a GPU.
static bool fusedKernelsOff() {
  static const bool off = [] {
    const char *value = std::getenv("METART_FUSED_KERNELS");
    return value && std::string(value) == "off";
  }();
  return off;
}

int metart_context_is_host(const metart_context *context) {
  return context && context->backend->hostMemory() && !fusedKernelsOff();
}

metart_status metart_run_host_kernel(metart_context *context,
                                     void (*kernel)(void **arguments,
                                                    int64_t chunk),
                                     void **arguments, int64_t chunks) {
  Checker check(context, "metart_run_host_kernel");
  if (!check.ok())
    return check.result();
  if (!kernel)
    return check.finish({METART_ERROR_INVALID_ARGUMENT, "the kernel is null"});
  if (!context->backend->hostMemory())
    return check.finish({METART_ERROR_UNSUPPORTED,
                         "a generated host kernel cannot run on a device "
                         "backend (compile with --fusion=off)"});
  if (chunks < 1)
    return check.finish(
        {METART_ERROR_INVALID_ARGUMENT,
         "expects at least one chunk, got " + std::to_string(chunks)});
  // Slices are disjoint: the result does not depend on the threads.
  cpu::parallelFor(chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; ++chunk)
      kernel(arguments, chunk);
  });
  return check.finish(KernelStatus::ok());
}

int metart_context_runs_device_kernels(const metart_context *context) {
  return context && context->backend->runsGeneratedKernels() &&
         !fusedKernelsOff();
}

int metart_device_kernel_ready(metart_context *context, const char *ptx,
                               const char *entry) {
  return metart_context_runs_device_kernels(context) && ptx && entry &&
         context->backend->loadsGenerated(ptx, entry);
}

metart_status metart_launch_device_kernel(metart_context *context,
                                          const char *ptx, const char *entry,
                                          int64_t blocks, int64_t threads,
                                          void **pointers, int64_t count) {
  Checker check(context, "metart_launch_device_kernel");
  if (!check.ok())
    return check.result();
  if (!ptx || !entry || (count > 0 && !pointers) || count < 0)
    return check.finish({METART_ERROR_INVALID_ARGUMENT,
                         "a generated kernel needs its PTX, its entry and "
                         "its arguments"});
  // Each generated kernel is its own line in the profile (its entry is a
  // constant of the program, as the profile's keys must be).
  check.profileAs(entry);
  return check.finish(context->backend->launchGenerated(
      ptx, entry, blocks, threads, pointers, count));
}
