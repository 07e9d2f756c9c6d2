//===- KeyRings.cpp - ring attention's rings over mesh axes ---------------===//
//
// A rotation sends each buffer to the next rank of the group and receives
// the previous rank's (MPI_Sendrecv over MPI), after the asynchronous
// collectives started before it, as every blocking collective.
//
//===----------------------------------------------------------------------===//

#include "KeyRings.h"
#include "CommQueue.h"
#include "Execute.h"

using namespace metart;
using namespace metart::comm;

namespace {

class AxisRing final : public KeyRing {
public:
  AxisRing(metart_context *c, int32_t mask)
      : c(c), mask(mask), rank(c->comm->groupRank[mask]),
        ranks(c->comm->groupSize[mask]) {}

  int64_t size() const override { return ranks; }
  int64_t position() const override { return rank; }

  KernelStatus rotate(const RingBuffer *buffers, int count) override {
    Transport *transport = c->comm->transport.get();
    int to = int((rank + 1) % ranks), from = int((rank + ranks - 1) % ranks);
    for (int i = 0; i < count; ++i) {
      const RingBuffer &b = buffers[i];
      auto body = [&](Transport *t) {
        return t->sendRecv(mask, rank, b.from, b.into, b.count, b.dtype, to,
                           from);
      };
      auto run = [&] {
        return execute(c, "ring_exchange", mask, transport,
                       size_t(b.count) * dtypeSize(b.dtype), body);
      };
      KernelStatus status = c->commQueue ? c->commQueue->run(run) : run();
      if (status.failed())
        return status;
    }
    return KernelStatus::ok();
  }

  KernelStatus send(const void *data, int64_t count, metart_dtype dtype,
                    int64_t to) override {
    // Blocking, as KeyRing promises: the caller reuses `data`.
    return transfer(count, dtype, [&](Transport *t) {
      KernelStatus s = t->send(mask, data, count, dtype, int(to));
      return s.failed() ? s : t->completeSendsWithin(mask);
    });
  }
  KernelStatus recv(void *data, int64_t count, metart_dtype dtype,
                    int64_t from) override {
    return transfer(count, dtype, [&](Transport *t) {
      return t->recv(mask, data, count, dtype, int(from));
    });
  }

private:
  /// Runs one point-to-point transfer as a collective of the mask.
  template <typename Body>
  KernelStatus transfer(int64_t count, metart_dtype dtype, Body body) {
    Transport *transport = c->comm->transport.get();
    auto run = [&] {
      return execute(c, "ring_exchange", mask, transport,
                     size_t(count) * dtypeSize(dtype), body);
    };
    return c->commQueue ? c->commQueue->run(run) : run();
  }

  metart_context *c;
  int32_t mask;
  int64_t rank, ranks;
};

} // namespace

std::unique_ptr<KeyRing> metart::comm::keyRingOf(metart_context *c,
                                                 int32_t mask) {
  if (!c->comm || c->comm->groupSize[mask] <= 1)
    return std::make_unique<KeyRing>();
  return std::make_unique<AxisRing>(c, mask);
}
