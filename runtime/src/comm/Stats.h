//===- Stats.h - counters of collectives per axes mask ----------*- C++ -*-===//
//
// Every collective adds one call, its payload bytes and its time to the
// counters of its axes mask, so that the trainer can report bytes and time
// per axis and per iteration.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_STATS_H
#define METART_SRC_COMM_STATS_H

#include "metart/comm.h"

namespace metart::comm {

/// The number of axes masks (4 axes: 0 to 15).
inline constexpr int kNumMasks = 1 << METART_NUM_AXES;

/// A mask's name ("task", "task+data", "none"), "" out of range.
const char *axesName(int mask);

/// The counters of one context.
struct Stats {
  metart_comm_stats perMask[kNumMasks] = {};

  void addCall(int mask, int64_t bytes) {
    ++perMask[mask].calls;
    perMask[mask].bytes += bytes;
  }
  void addSeconds(int mask, double seconds) {
    perMask[mask].seconds += seconds;
  }
  void addOverlapped(int mask, double seconds) {
    ++perMask[mask].async_calls;
    perMask[mask].overlapped_seconds += seconds;
  }
  void reset() { *this = Stats(); }
};

} // namespace metart::comm

#endif // METART_SRC_COMM_STATS_H
