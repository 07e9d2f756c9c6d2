//===- CommStats.cpp - the C API of the collectives' counters -------------===//

#include "../Context.h"
#include "Communicator.h"
#include "Stats.h"

using namespace metart;
using namespace metart::comm;

/// Adds the time of device work that finished since the last look.
static void settle(metart_context *c) {
  if (c->comm && c->comm->transport)
    c->comm->transport->settle(c->commStats);
}

extern "C" metart_status metart_comm_stats_get(metart_context *c,
                                               int32_t axes_mask,
                                               metart_comm_stats *out_stats) {
  if (!c || !out_stats) {
    setLastError(c, "metart_comm_stats_get: null context or out_stats");
    return METART_ERROR_INVALID_ARGUMENT;
  }
  if (axes_mask < 0 || axes_mask >= kNumMasks) {
    setLastError(c, "metart_comm_stats_get: axes mask " +
                        std::to_string(axes_mask) + " is not in [0, " +
                        std::to_string(kNumMasks - 1) + "]");
    return METART_ERROR_INVALID_ARGUMENT;
  }
  settle(c);
  *out_stats = c->commStats.get(axes_mask);
  return METART_OK;
}

extern "C" metart_status metart_comm_stats_total(metart_context *c,
                                                 metart_comm_stats *out_stats) {
  if (!c || !out_stats) {
    setLastError(c, "metart_comm_stats_total: null context or out_stats");
    return METART_ERROR_INVALID_ARGUMENT;
  }
  settle(c);
  *out_stats = {};
  for (int mask = 0; mask < kNumMasks; ++mask) {
    metart_comm_stats s = c->commStats.get(mask);
    out_stats->calls += s.calls;
    out_stats->bytes += s.bytes;
    out_stats->seconds += s.seconds;
    out_stats->async_calls += s.async_calls;
    out_stats->overlapped_seconds += s.overlapped_seconds;
  }
  return METART_OK;
}

extern "C" void metart_comm_stats_reset(metart_context *c) {
  if (!c)
    return;
  settle(c);
  c->commStats.reset();
}
