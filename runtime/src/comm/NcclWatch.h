//===- NcclWatch.h - the watchdog's view of NCCL's collectives --*- C++ -*-===//
//
// NCCL queues a collective on a stream and returns at once, so a hung one
// is only seen by whoever waits for the stream later, outside any guard.
// After each collective the transport records an event, tagged with the
// collective, its axes and the meta-iteration; the watchdog's thread asks a
// few times a second whether the oldest has been pending too long, and
// aborts the communicators when one has (as PyTorch's NCCL watchdog does).
// Collectives captured into a CUDA graph record nothing: each launch of
// the graph records one event, and the message names the collectives it
// holds. Events are pooled: no allocation per step once the pool has
// grown to the collectives in flight.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_NCCLWATCH_H
#define METART_SRC_COMM_NCCLWATCH_H

#include "../Tensor.h"
#include "Watchdog.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace metart::comm {

class NcclWatch final : public watchdog::DeviceWatch {
public:
  /// `abortComms` aborts the communicators whose work is watched.
  explicit NcclWatch(std::function<void()> abortComms);
  ~NcclWatch() override;

  /// After collective `what` over `mask` was queued on `stream`: marks its
  /// completion, or, while `stream` is captured, names it as part of the
  /// graph.
  void queued(const char *what, int mask, cudaStream_t stream);
  /// After a launch on `stream` of the graph captured last.
  void launchedGraph(cudaStream_t stream);
  /// Queues on `stream` a kernel that spins until `abort` (--hang-rank).
  KernelStatus hang(cudaStream_t stream);

  std::string overdue(int64_t timeoutMs) override;
  void abort() override;

  /// Collectives pending now (for tests).
  size_t pendingCount();

private:
  struct Pending {
    cudaEvent_t event;
    /// The collective, or null for a launch of the captured graph.
    const char *what;
    int mask;
    int64_t iteration;
    /// When it was queued (steady clock, ns).
    int64_t since;
  };

  /// Returns the events of completed work to the pool (with the lock).
  void reap();
  /// The message part naming `p`.
  std::string describe(const Pending &p) const;

  std::function<void()> abortComms;
  std::mutex lock;
  std::vector<Pending> pending;
  std::vector<cudaEvent_t> pool;
  /// The collectives of the capture `captureId`, "all_reduce over task, ...".
  std::string captured;
  unsigned long long captureId = 0;
  /// The spin kernel's flag (--hang-rank), mapped host memory.
  volatile int *flag = nullptr;
  int *deviceFlag = nullptr;
};

} // namespace metart::comm

#endif // METART_SRC_COMM_NCCLWATCH_H
