//===- TcpTransport.h - collectives over the TCP world ----------*- C++ -*-===//
//
// The transport of a job torchrun or srun started without MPI (Tcp.h), on
// host memory. An all-reduce of less than 64 KiB goes through the group's
// first rank (the others send it their buffers, it reduces them in group
// order and sends the result back); a larger one around the group's ring
// (reduce-scatter, then all-gather). Either order is fixed, so runs repeat
// bit for bit. Gathers and broadcasts move each buffer once per receiver.
// MPI's algorithms (shared memory on a node) remain faster.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_TCPTRANSPORT_H
#define METART_SRC_COMM_TCPTRANSPORT_H

#include "Communicator.h"

#include <vector>

namespace metart::comm {

class TcpTransport final : public Transport {
public:
  TcpTransport(const Communicator &comm, Backend &backend);

  KernelStatus allReduce(int mask, const void *x, void *y, int64_t count,
                         metart_dtype dtype, Reduction reduction) override;
  KernelStatus allGather(int mask, const void *x, void *y, int64_t count,
                         metart_dtype dtype) override;
  KernelStatus reduceScatter(int mask, const void *x, void *y, int64_t count,
                             metart_dtype dtype, Reduction reduction) override;
  KernelStatus broadcast(int mask, void *y, int64_t count, metart_dtype dtype,
                         int root) override;
  KernelStatus send(int mask, const void *x, int64_t count, metart_dtype dtype,
                    int peer) override;
  KernelStatus recv(int mask, void *y, int64_t count, metart_dtype dtype,
                    int peer) override;
  KernelStatus barrier(int mask) override;
  KernelStatus broadcastHostBytes(int mask, void *data, size_t bytes,
                                  int root) override;
  bool runsOnAnyThread() const override { return true; }

private:
  /// All-reduces from this size up run around the ring.
  static constexpr size_t kRingBytes = 64 << 10;
  /// A reduce-scatter then an all-gather around the group's ring, in place.
  KernelStatus ringAllReduce(int mask, void *y, int64_t count,
                             metart_dtype dtype, Reduction reduction);

  /// The world ranks of the group of `mask`, in group order.
  std::vector<int> members[kNumMasks];
  int position[kNumMasks] = {};
  Backend &backend;
  std::vector<char> scratch;
};

/// A TCP transport for `comm`: on host memory its collectives, on a
/// device only NCCL's bootstrap and barriers (`forBootstrap`); otherwise
/// refused on device memory.
KernelStatus createTcpTransport(const Communicator &comm, Backend &backend,
                                bool forBootstrap,
                                std::unique_ptr<Transport> &out);

} // namespace metart::comm

#endif // METART_SRC_COMM_TCPTRANSPORT_H
