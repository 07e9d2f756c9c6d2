//===- Trace.h - a timeline of a rank's steps and transfers -----*- C++ -*-===//
//
// With METART_TRACE=DIR, every rank appends to DIR/trace.<rank>.jsonl one
// line per step call and per collective or transfer: what, the axes mask,
// bytes, and begin/end in seconds on the host's monotonic clock (shared by
// the processes of one machine). bench/pipeline_timeline.py draws it.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_TRACE_H
#define METART_SRC_COMM_TRACE_H

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace metart::trace {

using Clock = std::chrono::steady_clock;

/// Whether METART_TRACE is set (read once).
bool enabled();

/// Records one event of this rank.
void record(const char *what, int32_t mask, size_t bytes,
            Clock::time_point begin, Clock::time_point end);

} // namespace metart::trace

#endif // METART_SRC_COMM_TRACE_H
