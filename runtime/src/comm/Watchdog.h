//===- Watchdog.h - a dead rank never hangs the job -------------*- C++ -*-===//
//
// When a rank dies, the others may wait for it forever inside a collective.
// The watchdog is a thread that stops this process, with a message that
// names the lost rank, when
//  - a peer on this host has exited or was killed (its /proc entry is gone
//    or a zombie), checked a few times a second;
//  - the launcher sends SIGTERM (mpirun does when a rank dies): it names
//    the peer that is gone when it can see it;
//  - one blocking collective has made no progress for METART_COMM_TIMEOUT
//    seconds (default 50; 0 turns this off), the last resort for peers on
//    other hosts under a launcher that kills nobody;
//  - device work that a DeviceWatch reports pending for as long (NCCL's
//    collectives are queued on a stream: no guard sees them hang).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_WATCHDOG_H
#define METART_SRC_COMM_WATCHDOG_H

#include <cstdint>
#include <string>

namespace metart::comm::watchdog {

/// Starts the thread and the SIGTERM handler (once the world has peers).
void start();
/// Seconds a blocking collective may make no progress (0 or less: off)
/// instead of METART_COMM_TIMEOUT's (the run's --comm-timeout).
void setTimeout(double seconds);
/// Whether the thread runs (and owns SIGTERM).
bool running();
/// Stops the thread: once every rank has passed the last barrier, a peer
/// exiting is no longer a failure.
void stop();

/// Marks the start of a blocking collective `what` over `mask`...
void enter(const char *what, int mask);
/// ... and its end.
void leave();

/// Device work that the thread checks a few times a second.
class DeviceWatch {
public:
  virtual ~DeviceWatch() = default;
  /// What has been pending for more than `timeoutMs` ("NCCL all_reduce over
  /// task"), else empty. Called on the watchdog's thread.
  virtual std::string overdue(int64_t timeoutMs) = 0;
  /// Frees what waits on the overdue work, before the process ends.
  virtual void abort() = 0;
};
/// Adds `watch` to the thread's checks until `unwatch`, which waits for a
/// check in progress.
void watch(DeviceWatch *watch);
void unwatch(DeviceWatch *watch);

/// The meta-iteration under way (from 1; 0: none), for the messages of
/// device work.
void setIteration(int64_t iteration);
int64_t iteration();

/// RAII for `enter`/`leave`.
struct Guard {
  Guard(const char *what, int mask) { enter(what, mask); }
  ~Guard() { leave(); }
  Guard(const Guard &) = delete;
  Guard &operator=(const Guard &) = delete;
};

} // namespace metart::comm::watchdog

#endif // METART_SRC_COMM_WATCHDOG_H
