//===- Workspace.h - host memory for a kernel's intermediates ---*- C++ -*-===//

#ifndef METART_SRC_CPU_WORKSPACE_H
#define METART_SRC_CPU_WORKSPACE_H

#include "../Tensor.h"

#include <cstddef>

namespace metart::cpu {

/// Host memory that a kernel uses for intermediate values (im2col columns,
/// statistics), kept between calls and grown on demand.
class Workspace {
public:
  Workspace() = default;
  ~Workspace();
  Workspace(const Workspace &) = delete;
  Workspace &operator=(const Workspace &) = delete;

  /// At least `bytes` bytes, 64-byte aligned (their previous contents are
  /// lost), or null when the host has no more.
  void *get(size_t bytes);

private:
  void *data = nullptr;
  size_t capacity = 0;
};

/// `bytes` rounded up to the alignment that std::aligned_alloc requires
/// (a multiple of Arena::kAlignment, at least one).
size_t alignedSize(size_t bytes);

/// The status of a kernel whose workspace of `bytes` bytes could not be
/// allocated.
KernelStatus workspaceExhausted(size_t bytes);

} // namespace metart::cpu

#endif // METART_SRC_CPU_WORKSPACE_H
