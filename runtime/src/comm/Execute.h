//===- Execute.h - how one collective runs ----------------------*- C++ -*-===//
//
// Every collective (the C API's and ring attention's exchanges) runs its
// transport call through `execute`, which counts, times and traces it and
// lets the watchdog see it in flight.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_EXECUTE_H
#define METART_SRC_COMM_EXECUTE_H

#include "../Context.h"
#include "Communicator.h"
#include "Trace.h"
#include "Watchdog.h"

#include <chrono>

namespace metart::comm {

/// Runs one collective's `body` over `mask`, moving `bytes` when its group
/// has more than one rank (`transport` not null): counts it, times it, and
/// lets the watchdog see it in flight. Runs on the caller's thread or the
/// communication thread, never both at once. `counted`: the caller counted
/// the call already (a stale sum, which may end after its iteration's
/// statistics were read).
template <typename Body>
KernelStatus execute(metart_context *c, const char *what, int32_t mask,
                     Transport *transport, size_t bytes, Body &body,
                     bool counted = false) {
  watchdog::Guard guard(what, mask);
  auto begin = std::chrono::steady_clock::now();
  if (transport)
    transport->startTimer();
  KernelStatus status = body(transport);
  if (metart::trace::enabled())
    metart::trace::record(what, mask, transport ? bytes : 0, begin,
                          std::chrono::steady_clock::now());
  if (transport)
    transport->stopTimer(mask, c->commStats);
  else
    c->commStats.addSeconds(mask, std::chrono::duration<double>(
                                      std::chrono::steady_clock::now() - begin)
                                      .count());
  if (!counted)
    c->commStats.addCall(mask, transport ? bytes : 0);
  return status;
}

} // namespace metart::comm

#endif // METART_SRC_COMM_EXECUTE_H
