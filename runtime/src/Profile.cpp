//===- Profile.cpp - time spent in each runtime entry point ---------------===//

#include "Profile.h"

#include <algorithm>
#include <cstdio>

using namespace metart;

void KernelProfile::add(const char *function, double seconds) {
  Entry &entry = totals[function];
  if (entry.calls == 0)
    entry.function = function;
  ++entry.calls;
  entry.seconds += seconds;
}

std::vector<KernelProfile::Entry> KernelProfile::entries() const {
  std::vector<Entry> all;
  all.reserve(totals.size());
  for (const auto &[key, entry] : totals)
    all.push_back(entry);
  std::sort(all.begin(), all.end(), [](const Entry &a, const Entry &b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds
                                  : a.function < b.function;
  });
  return all;
}

double KernelProfile::totalSeconds() const {
  double total = 0;
  for (const auto &[key, entry] : totals)
    total += entry.seconds;
  return total;
}

/// printf into a std::string.
template <typename... Args>
static void appendf(std::string &out, const char *format, Args... args) {
  char line[256];
  std::snprintf(line, sizeof(line), format, args...);
  out += line;
}

std::string metart::formatProfile(const KernelProfile &profile, size_t top) {
  int64_t iterations = profile.spanIterations();
  double iterationSeconds = profile.spanSeconds();
  std::vector<KernelProfile::Entry> all = profile.entries();
  double total = profile.totalSeconds();
  int64_t calls = 0;
  for (const KernelProfile::Entry &e : all)
    calls += e.calls;
  double perIteration = iterations > 0 ? 1.0 / iterations : 0.0;
  double share = iterationSeconds > 0 ? 100.0 / iterationSeconds : 0.0;
  std::string out;
  appendf(out,
          "runtime profile of %lld meta-iterations: %.1f ms in %lld calls "
          "(%.1f%% of the iterations' %.1f ms)\n",
          static_cast<long long>(iterations), total * 1e3,
          static_cast<long long>(calls), total * share, iterationSeconds * 1e3);
  appendf(out, "  %-36s %10s %12s %14s %7s\n", "function", "calls", "total ms",
          "ms/iteration", "share");
  auto line = [&](const char *name, int64_t n, double seconds) {
    appendf(out, "  %-36s %10lld %12.2f %14.3f %6.1f%%\n", name,
            static_cast<long long>(n), seconds * 1e3,
            seconds * 1e3 * perIteration, seconds * share);
  };
  for (size_t i = 0; i < all.size() && i < top; ++i)
    line(all[i].function.c_str(), all[i].calls, all[i].seconds);
  if (all.size() > top) {
    int64_t restCalls = 0;
    double restSeconds = 0;
    for (size_t i = top; i < all.size(); ++i) {
      restCalls += all[i].calls;
      restSeconds += all[i].seconds;
    }
    char label[64];
    std::snprintf(label, sizeof(label), "(%zu others)", all.size() - top);
    line(label, restCalls, restSeconds);
  }
  return out;
}

std::string metart::profileJson(const KernelProfile &profile) {
  std::string out = "[";
  bool first = true;
  for (const KernelProfile::Entry &e : profile.entries()) {
    appendf(out, "%s{\"function\": \"%s\", \"calls\": %lld, \"seconds\": %.9g}",
            first ? "" : ", ", e.function.c_str(),
            static_cast<long long>(e.calls), e.seconds);
    first = false;
  }
  return out + "]";
}
