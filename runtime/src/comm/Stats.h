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

#include <mutex>

namespace metart::comm {

/// The number of axes masks (bit i: axis i).
inline constexpr int kNumMasks = 1 << METART_NUM_AXES;

/// A mask's name ("task", "task+data", "none"), "" out of range.
const char *axesName(int mask);

/// The counters of one context. Locked: the communication thread counts
/// started collectives while the caller reads or resets the counters.
class Stats {
public:
  void addCall(int mask, int64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    ++perMask[mask].calls;
    perMask[mask].bytes += bytes;
  }
  void addSeconds(int mask, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    perMask[mask].seconds += seconds;
  }
  void addOverlapped(int mask, double seconds) {
    std::lock_guard<std::mutex> lock(mutex);
    ++perMask[mask].async_calls;
    perMask[mask].overlapped_seconds += seconds;
  }
  metart_comm_stats get(int mask) const {
    std::lock_guard<std::mutex> lock(mutex);
    return perMask[mask];
  }
  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    for (metart_comm_stats &s : perMask)
      s = {};
  }

private:
  mutable std::mutex mutex;
  metart_comm_stats perMask[kNumMasks] = {};
};

} // namespace metart::comm

#endif // METART_SRC_COMM_STATS_H
