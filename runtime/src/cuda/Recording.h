//===- Recording.h - a meta-iteration recorded as a CUDA graph --*- C++ -*-===//
//
// What the CUDA backend keeps of a recording besides its graph: the host
// data the recorded work copies to the device, snapshotted in pinned
// memory (a graph copies from memory that lives as long as it), and the
// index range checks it holds, whose findings are read after each replay
// (a recording cannot wait for the device to read them as it goes).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_RECORDING_H
#define METART_SRC_CUDA_RECORDING_H

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace metart::cuda {

/// Where an index range check leaves its finding: the lowest position of
/// an index outside the range (~0: none) and the index there.
struct RangeSlot {
  unsigned long long position;
  long long value;
};

/// A recording in progress or done.
struct Recording {
  /// How many range checks one recording may hold.
  static constexpr size_t kMaxChecks = 256;

  /// A range check of the recorded work: what the indices are ("label")
  /// and the bound of their range; its finding is in `slots[i]`.
  struct Check {
    std::string what;
    int64_t bound;
  };

  bool capturing = false;
  cudaGraphExec_t graph = nullptr;
  /// Pinned host snapshots that the graph copies to the device.
  std::vector<void *> pinned;
  std::vector<Check> checks;
  /// Device memory for `kMaxChecks` findings.
  RangeSlot *slots = nullptr;
};

/// The message of an index outside [0, bound), as the CPU backend words it.
std::string outOfRangeMessage(const std::string &what, int64_t value,
                              uint64_t position, int64_t bound);

} // namespace metart::cuda

#endif // METART_SRC_CUDA_RECORDING_H
