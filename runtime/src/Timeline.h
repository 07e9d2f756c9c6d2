//===- Timeline.h - a timeline of runtime calls -----------------*- C++ -*-===//
//
// `--trace=FILE` records, for every runtime call of the meta-iterations
// (kernels, copies, collectives) and for each meta-iteration, when it began
// and how long it took, and writes them in the Chrome trace event format,
// which the Perfetto UI (ui.perfetto.dev) and chrome://tracing open: one
// process per rank, the calls on one track and the meta-iterations on
// another. As with --profile, device backends synchronise after each call,
// so a call's span covers its device work. Recording stops at kMaxEvents
// (the file says so) so that a long run cannot exhaust memory.
//
// METART_TRACE=DIR (comm/Trace.h) is the older, coarser record: a rank's
// steps and transfers as JSON lines, which bench/pipeline_timeline.py
// draws.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_TIMELINE_H
#define METART_SRC_TIMELINE_H

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace metart {

class Timeline {
public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxEvents = size_t(1) << 21;

  bool enabled() const { return on; }
  void enable(bool value);
  /// Records one call of `function` (a string literal) from `begin` to
  /// `end`.
  void call(const char *function, Clock::time_point begin,
            Clock::time_point end);
  /// Records meta-iteration `iteration` from `begin` to `end`.
  void iteration(int64_t iteration, Clock::time_point begin,
                 Clock::time_point end);
  size_t size() const { return events.size(); }
  bool truncated() const { return dropped > 0; }

  /// The trace as Chrome trace event JSON, for process `rank`.
  std::string json(int rank) const;

private:
  struct Event {
    const char *name; // null: a meta-iteration
    int64_t iteration;
    double beginUs, durationUs;
  };
  void add(Event event);

  bool on = false;
  bool started = false;
  Clock::time_point origin;
  std::vector<Event> events;
  size_t dropped = 0;
};

/// Where rank `rank` of `ranks` writes the trace asked for at `path`: the
/// path itself on one rank, else with `.rank<r>` before a `.json` suffix
/// (or after the path).
std::string timelinePath(const std::string &path, int rank, int ranks);

} // namespace metart

#endif // METART_SRC_TIMELINE_H
