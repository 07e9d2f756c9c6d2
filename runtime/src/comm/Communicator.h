//===- Communicator.h - a context's mesh and its transport ------*- C++ -*-===//
//
// A communicator lays the world out as the mesh and holds one group per
// axes mask; a transport (MPI on host memory, NCCL on device memory) moves
// contiguous buffers within those groups. The C entry points (Comm.cpp)
// check operands, reorder blocks for collectives along a dimension other
// than the first, and handle groups of one without the transport.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_COMMUNICATOR_H
#define METART_SRC_COMM_COMMUNICATOR_H

#include "../Backend.h"
#include "../Context.h"
#include "Stats.h"

#include <chrono>
#include <memory>
#include <string>

namespace metart::comm {

/// What a reduction computes.
enum class Reduction { Sum = METART_REDUCE_SUM, Max = METART_REDUCE_MAX };

/// How an all-reduce moves its data (metart_allreduce_algorithm).
enum class AllReduceAlgorithm {
  Library = METART_ALLREDUCE_LIBRARY,
  Ring = METART_ALLREDUCE_RING,
  Tree = METART_ALLREDUCE_TREE,
  Hierarchical = METART_ALLREDUCE_HIERARCHICAL,
};

/// Collectives on contiguous buffers of the context's memory, within the
/// group of an axes mask (whose size is more than one). Counts are elements
/// of `dtype`; group ranks are positions in the group.
class Transport {
public:
  virtual ~Transport() = default;

  /// `x` may be `y`.
  virtual KernelStatus allReduce(int mask, const void *x, void *y,
                                 int64_t count, metart_dtype dtype,
                                 Reduction reduction) = 0;
  /// An all-reduce by the given algorithm; a transport that chooses its
  /// own (NCCL: NCCL_ALGO) runs `allReduce`.
  virtual KernelStatus allReduceWith(int mask, const void *x, void *y,
                                     int64_t count, metart_dtype dtype,
                                     Reduction reduction, AllReduceAlgorithm) {
    return allReduce(mask, x, y, count, dtype, reduction);
  }
  /// `count` elements from each rank, concatenated in group order into `y`.
  virtual KernelStatus allGather(int mask, const void *x, void *y,
                                 int64_t count, metart_dtype dtype) = 0;
  /// Reduces `x` (count elements per rank, in group order) and keeps this
  /// rank's `count` in `y`.
  virtual KernelStatus reduceScatter(int mask, const void *x, void *y,
                                     int64_t count, metart_dtype dtype,
                                     Reduction reduction) = 0;
  /// A reduce-scatter by the given algorithm (ring for any but the
  /// library's); a transport that chooses its own runs `reduceScatter`.
  virtual KernelStatus reduceScatterWith(int mask, const void *x, void *y,
                                         int64_t count, metart_dtype dtype,
                                         Reduction reduction,
                                         AllReduceAlgorithm) {
    return reduceScatter(mask, x, y, count, dtype, reduction);
  }
  /// `x` holds `count` elements for each rank in group order; `y` receives
  /// `count` from each rank in group order. A transport without one
  /// (`hasAllToAll` false) is served by an all-gather.
  virtual bool hasAllToAll() const { return false; }
  virtual KernelStatus allToAll(int mask, const void *x, void *y, int64_t count,
                                metart_dtype dtype) {
    return {METART_ERROR_UNSUPPORTED, "all-to-all is not offered"};
  }
  /// `y` becomes the root's `y`.
  virtual KernelStatus broadcast(int mask, void *y, int64_t count,
                                 metart_dtype dtype, int root) = 0;
  virtual KernelStatus send(int mask, const void *x, int64_t count,
                            metart_dtype dtype, int peer) = 0;
  virtual KernelStatus recv(int mask, void *y, int64_t count,
                            metart_dtype dtype, int peer) = 0;
  /// Sends `x` to group rank `to` while receiving `y` from `from` (a ring's
  /// step, where every rank does both). `x` is reusable on return. By
  /// default even group ranks send first and odd ones receive first, so a
  /// transport whose sends block until received (TCP) cannot deadlock; one
  /// whose sends return earlier overrides it.
  virtual KernelStatus sendRecv(int mask, int64_t groupRank, const void *x,
                                void *y, int64_t count, metart_dtype dtype,
                                int to, int from) {
    bool sendFirst = groupRank % 2 == 0;
    for (int turn = 0; turn < 2; ++turn) {
      KernelStatus s = (turn == 0) == sendFirst
                           ? send(mask, x, count, dtype, to)
                           : recv(mask, y, count, dtype, from);
      if (s.failed())
        return s;
    }
    return KernelStatus::ok();
  }
  /// Waits for the context's work and for every rank of the group.
  virtual KernelStatus barrier(int mask) = 0;
  /// Completes every send still in flight (their buffers are about to be
  /// reused); a transport whose sends complete on return has none.
  virtual KernelStatus completeSends() { return KernelStatus::ok(); }
  /// Completes the sends in flight to the groups of `mask` (their masks
  /// inside it), leaving the others in flight.
  virtual KernelStatus completeSendsWithin(int mask) {
    return KernelStatus::ok();
  }
  /// `bytes` of host memory from group rank `root` to the group's others,
  /// whatever memory the transport's collectives move (NCCL's bootstrap).
  virtual KernelStatus broadcastHostBytes(int, void *, size_t, int) {
    return {METART_ERROR_UNSUPPORTED, "no host broadcast"};
  }
  /// Whether collectives may run on a communication thread while the
  /// caller computes (host memory; a device transport would need its own
  /// stream instead).
  virtual bool runsOnAnyThread() const { return false; }
  /// A device transport that runs a started collective on a stream of its
  /// own: `forkSideStream` makes the side stream wait for the work queued
  /// so far and sends the transport's collectives there until
  /// `joinSideStream(key)`, which marks their completion under `key`;
  /// `waitSideStream(key)` makes the compute stream wait for that mark.
  virtual bool runsOnSideStream() const { return false; }
  virtual KernelStatus forkSideStream() {
    return {METART_ERROR_UNSUPPORTED, "no side stream"};
  }
  virtual KernelStatus joinSideStream(const void *) {
    return {METART_ERROR_UNSUPPORTED, "no side stream"};
  }
  virtual KernelStatus waitSideStream(const void *) {
    return {METART_ERROR_UNSUPPORTED, "no side stream"};
  }

  /// Times one collective over `mask`: host wall time here; a device
  /// transport queues events instead and adds their time in `settle`.
  virtual void startTimer() { start = std::chrono::steady_clock::now(); }
  virtual void stopTimer(int mask, Stats &stats) {
    stats.addSeconds(mask, std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start)
                               .count());
  }
  /// Adds the times of timed device work (waits for it).
  virtual void settle(Stats &) {}
  /// --hang-rank on a device: queues work that never ends before the
  /// collectives that follow, and that the watchdog ends when it aborts
  /// them. Unsupported where the rank hangs on the host instead.
  virtual KernelStatus hangDevice() {
    return {METART_ERROR_UNSUPPORTED, "the rank hangs on the host"};
  }

private:
  std::chrono::steady_clock::time_point start;
};

/// The mesh, this rank's place on it, and the transport.
struct Communicator {
  int64_t mesh[METART_NUM_AXES] = {1, 1, 1, 1, 1, 1};
  int64_t coords[METART_NUM_AXES] = {};
  /// This rank's position in the group of each mask, and the group's size.
  int64_t groupRank[kNumMasks] = {};
  int64_t groupSize[kNumMasks] = {};
  std::unique_ptr<Transport> transport;

  /// Fills coords, groupRank and groupSize for world rank `rank`.
  void layOut(int64_t rank);
};

/// A transport through MPI: one communicator per mask split from the world
/// (every rank creates them in the same order). For a backend whose memory
/// is on a device, buffers are staged through host memory.
KernelStatus createMpiTransport(const Communicator &comm, Backend &backend,
                                bool deviceMemory,
                                std::unique_ptr<Transport> &out);

#ifdef METART_HAVE_NCCL
/// A transport through NCCL on the CUDA backend's device and stream, one
/// NCCL communicator per mask, bootstrapped over `host` (an MPI or TCP
/// transport of the same mesh, which it keeps for barriers).
KernelStatus createNcclTransport(const Communicator &comm, Backend &backend,
                                 std::unique_ptr<Transport> host,
                                 std::unique_ptr<Transport> &out);
#endif

} // namespace metart::comm

#endif // METART_SRC_COMM_COMMUNICATOR_H
