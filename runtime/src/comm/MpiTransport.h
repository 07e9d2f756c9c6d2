//===- MpiTransport.h - collectives through MPI -----------------*- C++ -*-===//
//
// The CPU backend's transport, and the bootstrap and barriers of the NCCL
// transport: one MPI communicator per axes mask whose group has more than
// one rank, split from MPI_COMM_WORLD in mask order on every rank.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_MPITRANSPORT_H
#define METART_SRC_COMM_MPITRANSPORT_H

#include "Communicator.h"

#include <mpi.h>

#include <functional>
#include <vector>

namespace metart::comm {

class MpiTransport final : public Transport {
public:
  MpiTransport(Backend &backend, bool deviceMemory)
      : backend(backend), deviceMemory(deviceMemory) {
    for (MPI_Comm *list : {groups, nodeGroups, crossGroups})
      for (int mask = 0; mask < kNumMasks; ++mask)
        list[mask] = MPI_COMM_NULL;
  }
  ~MpiTransport() override;

  /// Splits the groups of `comm`'s mesh from the world.
  KernelStatus create(const Communicator &comm);
  /// The MPI communicator of `mask` (MPI_COMM_NULL for a group of one).
  MPI_Comm group(int mask) const { return groups[mask]; }

  KernelStatus allReduce(int mask, const void *x, void *y, int64_t count,
                         metart_dtype dtype, Reduction reduction) override;
  KernelStatus allReduceWith(int mask, const void *x, void *y, int64_t count,
                             metart_dtype dtype, Reduction reduction,
                             AllReduceAlgorithm algorithm) override;
  KernelStatus allGather(int mask, const void *x, void *y, int64_t count,
                         metart_dtype dtype) override;
  bool hasAllToAll() const override { return true; }
  KernelStatus allToAll(int mask, const void *x, void *y, int64_t count,
                        metart_dtype dtype) override;
  KernelStatus reduceScatter(int mask, const void *x, void *y, int64_t count,
                             metart_dtype dtype, Reduction reduction) override;
  KernelStatus reduceScatterWith(int mask, const void *x, void *y,
                                 int64_t count, metart_dtype dtype,
                                 Reduction reduction,
                                 AllReduceAlgorithm algorithm) override;
  KernelStatus broadcast(int mask, void *y, int64_t count, metart_dtype dtype,
                         int root) override;
  KernelStatus send(int mask, const void *x, int64_t count, metart_dtype dtype,
                    int peer) override;
  KernelStatus recv(int mask, void *y, int64_t count, metart_dtype dtype,
                    int peer) override;
  KernelStatus sendRecv(int mask, int64_t groupRank, const void *x, void *y,
                        int64_t count, metart_dtype dtype, int to,
                        int from) override;
  KernelStatus barrier(int mask) override;
  KernelStatus broadcastHostBytes(int mask, void *data, size_t bytes,
                                  int root) override;
  bool runsOnAnyThread() const override { return !deviceMemory; }
  KernelStatus completeSends() override { return progressSends(kNumMasks - 1); }
  KernelStatus completeSendsWithin(int mask) override {
    return progressSends(mask);
  }

private:
  /// Host memory holding `bytes` of device memory at `device` (copied in
  /// when `load`), or `device` itself on the CPU.
  KernelStatus stage(std::vector<char> &host, const void *device, size_t bytes,
                     bool load, void *&out);
  /// Copies a staged result back to the device.
  KernelStatus unstage(void *device, const void *host, size_t bytes);

  /// Completes the sends in flight whose peers are in the groups of
  /// `within` (their masks inside it) and tests the others; 0 tests all.
  KernelStatus progressSends(int within);
  /// After the group's sends complete, runs the MPI call `what` as
  /// `call(in, out)` on `x` (`inBytes`) and `y` (`outBytes`), staged through
  /// host memory when the transport's buffers are the device's.
  KernelStatus exchange(int mask, const void *x, size_t inBytes, void *y,
                        size_t outBytes, const char *what,
                        const std::function<int(void *, void *)> &call);

  /// Splits the group of `mask` into nodes (ranks sharing memory, or
  /// METART_RANKS_PER_NODE consecutive ones) and the rings across them,
  /// once; `usable` is false when nodes differ in size (then a
  /// hierarchical all-reduce runs as a ring).
  KernelStatus splitNodes(int mask, bool &usable);

  struct PendingSend {
    MPI_Request request;
    int mask;
    std::vector<char> owned;
  };

  Backend &backend;
  bool deviceMemory;
  std::vector<PendingSend> pendingSends;
  MPI_Comm groups[kNumMasks];
  MPI_Comm nodeGroups[kNumMasks], crossGroups[kNumMasks];
  bool nodesSplit[kNumMasks] = {}, nodesUsable[kNumMasks] = {};
  std::vector<char> stagedIn, stagedOut, scratch, whole;
};

/// What the mesh's groups split from: the world, or the ranks of the mesh
/// alone when the job also has parameter servers (Servers.h).
MPI_Comm &meshWorld();

} // namespace metart::comm

#endif // METART_SRC_COMM_MPITRANSPORT_H
