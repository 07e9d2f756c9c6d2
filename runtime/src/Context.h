//===- Context.h - the runtime context --------------------------*- C++ -*-===//
//
// The definition of the opaque `metart_context`: the backend it runs on, the
// arena that holds its memory, the message of its last error, its
// communicator (when one is attached) with the counters of collectives, and
// the time profile of its calls (when enabled).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CONTEXT_H
#define METART_SRC_CONTEXT_H

#include "Arena.h"
#include "Backend.h"
#include "CarrySite.h"
#include "Profile.h"
#include "Timeline.h"
#include "comm/CommQueue.h"
#include "comm/Stats.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace metart::comm {
struct Communicator;
struct CommunicatorDeleter {
  void operator()(Communicator *c) const;
};
struct CompressionState;
struct CompressionStateDeleter {
  void operator()(CompressionState *s) const;
};
} // namespace metart::comm

struct metart_context {
  metart_context(std::unique_ptr<metart::Backend> backend, size_t limitBytes)
      : backend(std::move(backend)), arena(*this->backend, limitBytes) {}

  ~metart_context();

  std::unique_ptr<metart::Backend> backend;
  metart::Arena arena;
  /// metart_host_buffer_alloc's blocks and sizes (freed with the context).
  std::vector<std::pair<void *, size_t>> hostBuffers;
  /// Destinations of metart_copy_device_start's copies not yet waited for.
  std::vector<void *> copiesInFlight;
  /// metart_carry_store/load's sites (CarrySite.h): persistent buffers.
  std::map<int64_t, metart::CarrySite> carries;
  std::string lastError;
  metart::comm::Stats commStats;
  metart::KernelProfile profile;
  /// The timeline of its calls, under --trace (Timeline.h).
  metart::Timeline timeline;
  /// Destroyed before the backend whose stream it may use.
  std::unique_ptr<metart::comm::Communicator, metart::comm::CommunicatorDeleter>
      comm;
  /// Error feedback of compressed all-reduces per call site (Compression.h):
  /// the buffers that started collectives still use, so declared before
  /// `commQueue`.
  std::unique_ptr<metart::comm::CompressionState,
                  metart::comm::CompressionStateDeleter>
      compression;
  /// Asynchronous collectives (CommQueue.h); last: its
  /// thread is joined (what is queued runs) before the transport and the
  /// call sites' buffers it uses go.
  std::unique_ptr<metart::comm::CommQueue> commQueue;
};

namespace metart {

/// Records `message` as the last error of `context`, or, for a null context,
/// as this thread's last error without a context.
void setLastError(metart_context *context, std::string message);

} // namespace metart

#endif // METART_SRC_CONTEXT_H
