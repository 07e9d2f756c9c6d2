//===- TcpTransport.h - collectives over the TCP world ----------*- C++ -*-===//
//
// The transport of a job torchrun or srun started without MPI (Tcp.h), on
// host memory. Each collective goes through the group's first rank: the
// others send it their buffers, it reduces them in group order (the same
// order on every run, so runs repeat bit for bit) and sends the result
// back; gathers and broadcasts move each buffer once per receiver. This
// moves (n - 1) times the data of a ring on n ranks, which is fine for the
// few ranks of a node and the meta-gradients of small models; MPI's
// algorithms remain the choice for larger jobs.
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
