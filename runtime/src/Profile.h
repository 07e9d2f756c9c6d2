//===- Profile.h - time spent in each runtime entry point -------*- C++ -*-===//
//
// When enabled, every C API call that runs a kernel, a copy or a collective
// adds its wall time to its function's total. Device backends synchronise
// before the time is taken, so a call's time covers its device work (the
// overhead that adds is why profiling is off by default); nothing is
// recorded for a call that fails.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_PROFILE_H
#define METART_SRC_PROFILE_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace metart {

class KernelProfile {
public:
  struct Entry {
    std::string function;
    int64_t calls = 0;
    double seconds = 0;
  };

  bool enabled() const { return on; }
  void enable(bool value) { on = value; }
  /// Adds one call of `function` (a string literal: entries are keyed by
  /// its address) that took `seconds`.
  void add(const char *function, double seconds);
  /// The functions called, most time first.
  std::vector<Entry> entries() const;
  /// The total time of all calls.
  double totalSeconds() const;
  /// What the profile covers: meta-iterations and their wall time.
  void setSpan(int64_t count, double seconds) {
    iterations = count;
    iterationSeconds = seconds;
  }
  int64_t spanIterations() const { return iterations; }
  double spanSeconds() const { return iterationSeconds; }

private:
  bool on = false;
  int64_t iterations = 0;
  double iterationSeconds = 0;
  std::unordered_map<const char *, Entry> totals;
};

/// The profile as text: one line per function of the `top` most expensive
/// (the rest summed in one line), with calls, total and per-iteration
/// milliseconds and share of the span's time.
std::string formatProfile(const KernelProfile &profile, size_t top = 20);

/// The profile as a JSON array of {"function", "calls", "seconds"}.
std::string profileJson(const KernelProfile &profile);

} // namespace metart

#endif // METART_SRC_PROFILE_H
