//===- SideCopies.h - copies that overlap the compute stream ----*- C++ -*-===//
//
// Offloaded parameters and optimizer state are prefetched: the copy that
// brings the next op's operands to the device runs on a second stream
// while the current op computes. Each copy starts behind the work queued
// so far on the compute stream (its destination may have been another
// op's memory) and the compute stream's later work waits for it at
// `wait`: a fork and a join with events, which a CUDA graph captures as
// two branches.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_SIDECOPIES_H
#define METART_SRC_CUDA_SIDECOPIES_H

#include "../Tensor.h"

#include <cuda_runtime_api.h>

#include <map>
#include <vector>

namespace metart::cuda {

/// Copies on a second stream of the current device, joined by destination.
class SideCopies {
public:
  SideCopies() = default;
  /// The device is the owner's current one.
  ~SideCopies();
  SideCopies(const SideCopies &) = delete;
  SideCopies &operator=(const SideCopies &) = delete;

  /// Queues the copy on the side stream behind the work queued on
  /// `compute` so far.
  KernelStatus start(cudaStream_t compute, void *destination,
                     const void *source, size_t bytes);
  /// Makes the work queued on `compute` from now on wait for the copy to
  /// `destination`; nothing to wait for is no error.
  KernelStatus wait(cudaStream_t compute, void *destination);
  /// Waits for every copy queued (before the memory they write goes).
  void synchronize();

private:
  /// An event from the spares, or a new one.
  KernelStatus takeEvent(cudaEvent_t &event);

  cudaStream_t side = nullptr;
  std::vector<cudaEvent_t> spare;
  std::map<void *, cudaEvent_t> inFlight;
};

} // namespace metart::cuda

#endif // METART_SRC_CUDA_SIDECOPIES_H
