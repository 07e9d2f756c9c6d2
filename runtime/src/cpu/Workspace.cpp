//===- Workspace.cpp - host memory for a kernel's intermediates -----------===//

#include "Workspace.h"

#include "../Arena.h"

#include <cstdlib>
#include <string>

namespace metart::cpu {

/// `bytes` rounded up to the alignment that std::aligned_alloc requires
/// (a multiple of Arena::kAlignment, at least one).
size_t alignedSize(size_t bytes) {
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

} // namespace metart::cpu
