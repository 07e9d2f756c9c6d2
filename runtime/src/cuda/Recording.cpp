//===- Recording.cpp - what a CUDA graph recording keeps ------------------===//
//
// A recording captures the context's stream (relaxed mode: the allocator
// may still call cudaMalloc) while the allocator hands out blocks from the
// recording's pool, so that the memory the graph's kernels use (any block
// in use when recording began, the workspace and the arena's scratch
// chunks among them, and any handed out while recording) stays theirs
// until the recording is dropped. Replaying launches the instantiated graph
// and, when it holds range checks, reads their findings back.
//
//===----------------------------------------------------------------------===//

#include "Recording.h"

#include <string>

namespace metart::cuda {

std::string outOfRangeMessage(const std::string &what, int64_t value,
                              uint64_t position, int64_t bound) {
  return what + " " + std::to_string(value) + " at position " +
         std::to_string(position) + " is out of range [0, " +
         std::to_string(bound) + ")";
}

} // namespace metart::cuda
