//===- CpuBackend.cpp - memory and copies of the CPU backend --------------===//

#include "CpuBackend.h"

#include <cstdlib>
#include <cstring>

namespace metart {

std::unique_ptr<Backend> createCpuBackend() {
  return std::make_unique<cpu::CpuBackend>();
}

namespace cpu {

/// `bytes` rounded up to the alignment that std::aligned_alloc requires
/// (a multiple of Arena::kAlignment, at least one).
static size_t alignedSize(size_t bytes) {
  size_t units = (bytes + Arena::kAlignment - 1) / Arena::kAlignment;
  return (units ? units : 1) * Arena::kAlignment;
}

Workspace::~Workspace() { std::free(data); }

void *Workspace::get(size_t bytes) {
  if (bytes <= capacity && data)
    return data;
  std::free(data);
  capacity = 0;
  data = std::aligned_alloc(Arena::kAlignment, alignedSize(bytes));
  if (data)
    capacity = alignedSize(bytes);
  return data;
}

KernelStatus workspaceExhausted(size_t bytes) {
  return {METART_ERROR_OUT_OF_MEMORY,
          "cannot allocate a workspace of " + std::to_string(bytes) + " bytes"};
}

void *CpuBackend::allocate(size_t bytes) {
  return std::aligned_alloc(Arena::kAlignment, alignedSize(bytes));
}

void CpuBackend::deallocate(void *data) { std::free(data); }

KernelStatus CpuBackend::copy(void *destination, const void *source,
                              size_t bytes, CopyKind) {
  // Host and device memory are one; device copies may overlap.
  std::memmove(destination, source, bytes);
  return KernelStatus::ok();
}

KernelStatus CpuBackend::synchronize() { return KernelStatus::ok(); }

} // namespace cpu
} // namespace metart
