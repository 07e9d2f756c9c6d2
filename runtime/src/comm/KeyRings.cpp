//===- KeyRings.cpp - ring attention's rings over mesh axes ---------------===//
//
// A rotation sends each buffer to the next rank of the group and receives
// the previous rank's (MPI_Sendrecv over MPI), after the asynchronous
// collectives started before it, as every blocking collective. A started
// rotation runs on the communication thread while the kernel computes on
// the block it holds (host memory; METART_RING_OVERLAP=off keeps it
// blocking).
//
//===----------------------------------------------------------------------===//

#include "KeyRings.h"
#include "CommQueue.h"
#include "Execute.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using namespace metart;
using namespace metart::comm;

namespace {

class AxisRing final : public KeyRing {
public:
  AxisRing(metart_context *c, int32_t mask)
      : c(c), mask(mask), rank(c->comm->groupRank[mask]),
        ranks(c->comm->groupSize[mask]) {}

  ~AxisRing() override { (void)finishRotate(); }

  int64_t size() const override { return ranks; }
  int64_t position() const override { return rank; }

  KernelStatus rotate(const RingBuffer *buffers, int count) override {
    for (int i = 0; i < count; ++i)
      if (KernelStatus status = inOrder([&] { return exchange(buffers[i]); });
          status.failed())
        return status;
    return KernelStatus::ok();
  }

  /// On host memory the rotation runs on the communication thread
  /// (CommQueue), in program order with the context's other collectives.
  KernelStatus startRotate(const RingBuffer *buffers, int count) override {
    if (!c->comm->transport->runsOnAnyThread() ||
        (std::getenv("METART_RING_OVERLAP") &&
         std::string(std::getenv("METART_RING_OVERLAP")) == "off"))
      return rotate(buffers, count);
    if (!c->commQueue)
      c->commQueue = std::make_unique<CommQueue>();
    std::vector<RingBuffer> moves(buffers, buffers + count);
    auto task = [this, moves] {
      for (const RingBuffer &b : moves)
        if (KernelStatus status = exchange(b); status.failed())
          return status;
      return KernelStatus::ok();
    };
    if (!c->commQueue->start(this, mask, task))
      return {METART_ERROR_BACKEND, "a ring rotation was started twice"};
    started = true;
    return KernelStatus::ok();
  }
  KernelStatus finishRotate() override {
    if (!started)
      return KernelStatus::ok();
    started = false;
    CommQueue::Completion done;
    c->commQueue->wait(this, done);
    // What the kernel did not wait for was hidden behind its computation.
    if (!done.status.failed())
      c->commStats.addOverlapped(
          mask, std::max(0.0, done.runSeconds - done.waitedSeconds));
    return done.status;
  }

  KernelStatus send(const void *data, int64_t count, metart_dtype dtype,
                    int64_t to) override {
    // Blocking, as KeyRing promises: the caller reuses `data`.
    return inOrder([&] {
      return collective(count, dtype, [&](Transport *t) {
        KernelStatus s = t->send(mask, data, count, dtype, int(to));
        return s.failed() ? s : t->completeSendsWithin(mask);
      });
    });
  }
  KernelStatus recv(void *data, int64_t count, metart_dtype dtype,
                    int64_t from) override {
    return inOrder([&] {
      return collective(count, dtype, [&](Transport *t) {
        return t->recv(mask, data, count, dtype, int(from));
      });
    });
  }

private:
  /// Sends `b` to the next rank and receives the previous rank's.
  KernelStatus exchange(const RingBuffer &b) {
    int to = int((rank + 1) % ranks), from = int((rank + ranks - 1) % ranks);
    return collective(b.count, b.dtype, [&](Transport *t) {
      return t->sendRecv(mask, rank, b.from, b.into, b.count, b.dtype, to,
                         from);
    });
  }
  /// Runs `body` as a collective of the mask (counted, timed, watched).
  template <typename Body>
  KernelStatus collective(int64_t count, metart_dtype dtype, Body body) {
    return execute(c, "ring_exchange", mask, c->comm->transport.get(),
                   size_t(count) * dtypeSize(dtype), body);
  }
  /// Runs `run` in program order with the context's other collectives
  /// (behind those started and not yet done).
  template <typename Run> KernelStatus inOrder(Run run) {
    return c->commQueue ? c->commQueue->run(run) : run();
  }

  metart_context *c;
  int32_t mask;
  int64_t rank, ranks;
  bool started = false;
};

} // namespace

std::unique_ptr<KeyRing> metart::comm::keyRingOf(metart_context *c,
                                                 int32_t mask) {
  if (!c->comm || c->comm->groupSize[mask] <= 1)
    return std::make_unique<KeyRing>();
  return std::make_unique<AxisRing>(c, mask);
}
