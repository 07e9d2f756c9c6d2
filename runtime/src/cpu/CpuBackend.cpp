//===- CpuBackend.cpp - memory and copies of the CPU backend --------------===//

#include "CpuBackend.h"

#include <cstdlib>
#include <cstring>

namespace metart {

std::unique_ptr<Backend> createCpuBackend() {
  return std::make_unique<cpu::CpuBackend>();
}

namespace cpu {

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
