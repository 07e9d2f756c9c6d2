//===- NcclTransport.cpp - collectives through NCCL on the GPU ------------===//
//
// One NCCL communicator per axes mask whose group has more than one rank:
// group rank 0 creates the unique id and broadcasts it over the group's MPI
// communicator, then every member joins with ncclCommInitRank on the
// context's device. Collectives are queued on the context's stream and
// timed by a pair of events each, read when the counters are; the watchdog
// sees each one pending through NcclWatch and aborts the communicators
// when one takes longer than --comm-timeout.
//
//===----------------------------------------------------------------------===//

#include "../cuda/CudaBackend.h"
#include "Communicator.h"
#include "NcclWatch.h"

#include <nccl.h>

#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

using namespace metart;
using namespace metart::comm;

namespace {

ncclDataType_t ncclType(metart_dtype dtype) {
  switch (dtype) {
  case METART_F32:
    return ncclFloat32;
  case METART_F64:
    return ncclFloat64;
  case METART_I32:
    return ncclInt32;
  case METART_BF16:
    return ncclBfloat16;
  case METART_F16:
    return ncclFloat16;
  default:
    return ncclInt64;
  }
}

ncclRedOp_t ncclOp(Reduction reduction) {
  return reduction == Reduction::Max ? ncclMax : ncclSum;
}

KernelStatus check(ncclResult_t result, const char *call) {
  if (result == ncclSuccess)
    return KernelStatus::ok();
  return {METART_ERROR_BACKEND,
          std::string(call) + " failed: " + ncclGetErrorString(result)};
}

KernelStatus checkCuda(cudaError_t error, const char *call) {
  if (error == cudaSuccess)
    return KernelStatus::ok();
  return {METART_ERROR_BACKEND,
          std::string(call) + " failed: " + cudaGetErrorString(error)};
}

class NcclTransport final : public Transport {
public:
  NcclTransport(cuda::CudaBackend &backend, std::unique_ptr<Transport> host)
      : backend(backend), host(std::move(host)), watch([this] { abortAll(); }) {
    for (ncclComm_t &c : comms)
      c = nullptr;
    watchdog::watch(&watch);
    this->backend.setGraphLaunchHook(
        [this](cudaStream_t stream) { watch.launchedGraph(stream); });
  }
  ~NcclTransport() override {
    watchdog::unwatch(&watch);
    backend.setGraphLaunchHook(nullptr);
    cudaSetDevice(backend.getDevice());
    for (auto &[key, event] : joined)
      cudaEventDestroy(event);
    if (side)
      cudaStreamDestroy(side);
    for (const Timing &t : pending) {
      cudaEventDestroy(t.start);
      cudaEventDestroy(t.stop);
    }
    for (ncclComm_t c : comms)
      if (c)
        ncclCommDestroy(c);
  }

  KernelStatus create(const Communicator &comm) {
    if (KernelStatus s =
            checkCuda(cudaSetDevice(backend.getDevice()), "cudaSetDevice");
        s.failed())
      return s;
    for (int mask = 1; mask < kNumMasks; ++mask) {
      if (comm.groupSize[mask] == 1)
        continue;
      ncclUniqueId id;
      if (comm.groupRank[mask] == 0)
        if (KernelStatus s = check(ncclGetUniqueId(&id), "ncclGetUniqueId");
            s.failed())
          return s;
      if (KernelStatus s = host->broadcastHostBytes(mask, &id, sizeof(id), 0);
          s.failed())
        return {METART_ERROR_BACKEND,
                "broadcasting the NCCL id failed: " + s.message};
      if (KernelStatus s =
              check(ncclCommInitRank(&comms[mask], int(comm.groupSize[mask]),
                                     id, int(comm.groupRank[mask])),
                    "ncclCommInitRank");
          s.failed())
        return s;
    }
    return KernelStatus::ok();
  }

  KernelStatus allReduce(int mask, const void *x, void *y, int64_t count,
                         metart_dtype dtype, Reduction reduction) override {
    return call("ncclAllReduce", "all_reduce", mask, [&](cudaStream_t s) {
      return ncclAllReduce(x, y, size_t(count), ncclType(dtype),
                           ncclOp(reduction), comms[mask], s);
    });
  }
  KernelStatus allGather(int mask, const void *x, void *y, int64_t count,
                         metart_dtype dtype) override {
    return call("ncclAllGather", "all_gather", mask, [&](cudaStream_t s) {
      return ncclAllGather(x, y, size_t(count), ncclType(dtype), comms[mask],
                           s);
    });
  }
  // One send and one receive per peer in a group: NCCL pairs them.
  bool hasAllToAll() const override { return true; }
  KernelStatus allToAll(int mask, const void *x, void *y, int64_t count,
                        metart_dtype dtype) override {
    return call("ncclSend/ncclRecv", "all_to_all", mask, [&](cudaStream_t s) {
      int size = 0;
      if (ncclResult_t r = ncclCommCount(comms[mask], &size); r != ncclSuccess)
        return r;
      size_t block = size_t(count) * dtypeSize(dtype);
      if (ncclResult_t r = ncclGroupStart(); r != ncclSuccess)
        return r;
      for (int peer = 0; peer < size; ++peer) {
        ncclSend(static_cast<const char *>(x) + peer * block, size_t(count),
                 ncclType(dtype), peer, comms[mask], s);
        ncclRecv(static_cast<char *>(y) + peer * block, size_t(count),
                 ncclType(dtype), peer, comms[mask], s);
      }
      return ncclGroupEnd();
    });
  }
  KernelStatus reduceScatter(int mask, const void *x, void *y, int64_t count,
                             metart_dtype dtype, Reduction reduction) override {
    return call("ncclReduceScatter", "reduce_scatter", mask,
                [&](cudaStream_t s) {
                  return ncclReduceScatter(x, y, size_t(count), ncclType(dtype),
                                           ncclOp(reduction), comms[mask], s);
                });
  }
  KernelStatus broadcast(int mask, void *y, int64_t count, metart_dtype dtype,
                         int root) override {
    return call("ncclBroadcast", "broadcast", mask, [&](cudaStream_t s) {
      return ncclBroadcast(y, y, size_t(count), ncclType(dtype), root,
                           comms[mask], s);
    });
  }
  KernelStatus send(int mask, const void *x, int64_t count, metart_dtype dtype,
                    int peer) override {
    return call("ncclSend", "send", mask, [&](cudaStream_t s) {
      return ncclSend(x, size_t(count), ncclType(dtype), peer, comms[mask], s);
    });
  }
  KernelStatus recv(int mask, void *y, int64_t count, metart_dtype dtype,
                    int peer) override {
    return call("ncclRecv", "recv", mask, [&](cudaStream_t s) {
      return ncclRecv(y, size_t(count), ncclType(dtype), peer, comms[mask], s);
    });
  }
  KernelStatus barrier(int mask) override { return host->barrier(mask); }

  // --hang-rank: the spin goes on the compute stream, before the
  // meta-iteration's first collective.
  KernelStatus hangDevice() override {
    return watch.hang(backend.getStream().get());
  }

  // --overlap: started collectives go to a second stream, forked from and
  // joined back into the compute stream with events (a fork-join that a
  // CUDA graph captures as two branches).
  bool runsOnSideStream() const override { return true; }
  KernelStatus forkSideStream() override {
    if (!side)
      if (KernelStatus s =
              checkCuda(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking),
                        "cudaStreamCreateWithFlags");
          s.failed())
        return s;
    cudaEvent_t ready = nullptr;
    if (KernelStatus s =
            checkCuda(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming),
                      "cudaEventCreateWithFlags");
        s.failed())
      return s;
    KernelStatus s =
        checkCuda(cudaEventRecord(ready, stream()), "cudaEventRecord");
    if (!s.failed())
      s = checkCuda(cudaStreamWaitEvent(side, ready, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(ready);
    if (!s.failed())
      onSide = true;
    return s;
  }
  KernelStatus joinSideStream(const void *key) override {
    onSide = false;
    cudaEvent_t done = nullptr;
    if (KernelStatus s =
            checkCuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming),
                      "cudaEventCreateWithFlags");
        s.failed())
      return s;
    if (KernelStatus s =
            checkCuda(cudaEventRecord(done, side), "cudaEventRecord");
        s.failed()) {
      cudaEventDestroy(done);
      return s;
    }
    joined[key] = done;
    return KernelStatus::ok();
  }
  KernelStatus waitSideStream(const void *key) override {
    auto it = joined.find(key);
    if (it == joined.end())
      return KernelStatus::ok();
    KernelStatus s = checkCuda(cudaStreamWaitEvent(stream(), it->second, 0),
                               "cudaStreamWaitEvent");
    cudaEventDestroy(it->second);
    joined.erase(it);
    return s;
  }

  // Events around each collective, read in `settle`: timing on the host
  // would wait for the device after every call.
  void startTimer() override {
    current = {};
    cudaEventCreate(&current.start);
    cudaEventCreate(&current.stop);
    cudaEventRecord(current.start, stream());
  }
  void stopTimer(int mask, Stats &) override {
    cudaEventRecord(current.stop, stream());
    current.mask = mask;
    pending.push_back(current);
  }
  void settle(Stats &stats) override {
    for (const Timing &t : pending) {
      float milliseconds = 0;
      if (cudaEventSynchronize(t.stop) == cudaSuccess &&
          cudaEventElapsedTime(&milliseconds, t.start, t.stop) == cudaSuccess)
        stats.addSeconds(t.mask, milliseconds * 1e-3);
      cudaEventDestroy(t.start);
      cudaEventDestroy(t.stop);
    }
    pending.clear();
  }

private:
  struct Timing {
    cudaEvent_t start = nullptr, stop = nullptr;
    int mask = 0;
  };

  cudaStream_t stream() { return onSide ? side : backend.getStream().get(); }

  /// Makes NCCL call `name`, which queues collective `what` over `mask` on
  /// the stream given to `body`, and shows the collective to the watchdog.
  template <typename Body>
  KernelStatus call(const char *name, const char *what, int mask, Body body) {
    std::lock_guard<std::timed_mutex> guard(calls);
    cudaStream_t s = stream();
    ncclResult_t result = body(s);
    if (result == ncclSuccess)
      watch.queued(what, mask, s);
    return check(result, name);
  }

  /// Aborts every communicator (from the watchdog's thread, before the
  /// process ends). Freeing one under a call in progress would crash that
  /// call, so the abort waits a moment for the calls to stop; a call still
  /// in progress then is blocked on the hung work, and the communicators
  /// are left to the process's end.
  void abortAll() {
    if (!calls.try_lock_for(std::chrono::milliseconds(500)))
      return;
    // Held until the process ends: no NCCL call starts after the abort.
    // One thread per communicator: each abort waits for its own kernels
    // and proxy.
    std::vector<std::thread> aborts;
    for (ncclComm_t c : comms)
      if (c)
        aborts.emplace_back([c] { ncclCommAbort(c); });
    for (std::thread &t : aborts)
      t.join();
  }

  cuda::CudaBackend &backend;
  /// The stream of started collectives (--overlap), made on first use.
  cudaStream_t side = nullptr;
  bool onSide = false;
  /// Each started collective's completion on the side stream.
  std::map<const void *, cudaEvent_t> joined;
  /// The bootstrap's and barriers' transport (MPI or TCP, host memory).
  std::unique_ptr<Transport> host;
  ncclComm_t comms[kNumMasks];
  Timing current;
  std::vector<Timing> pending;
  /// Held by each NCCL call, and by the abort.
  std::timed_mutex calls;
  NcclWatch watch;
};

} // namespace

KernelStatus comm::createNcclTransport(const Communicator &comm,
                                       Backend &backend,
                                       std::unique_ptr<Transport> host,
                                       std::unique_ptr<Transport> &out) {
  auto *device = dynamic_cast<cuda::CudaBackend *>(&backend);
  if (!device || !host)
    return {METART_ERROR_UNSUPPORTED,
            "NCCL needs a CUDA context and a host transport to bootstrap"};
  auto transport = std::make_unique<NcclTransport>(*device, std::move(host));
  if (KernelStatus s = transport->create(comm); s.failed())
    return s;
  out = std::move(transport);
  return KernelStatus::ok();
}
