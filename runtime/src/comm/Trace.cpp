//===- Trace.cpp - a timeline of a rank's steps and transfers -------------===//

#include "Trace.h"

#include "metart/comm.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

using namespace metart;

namespace {

struct Sink {
  std::mutex mutex;
  FILE *file = nullptr;
  bool opened = false;

  ~Sink() {
    if (file)
      std::fclose(file);
  }
};

Sink &sink() {
  static Sink instance;
  return instance;
}

const char *directory() {
  static const char *value = std::getenv("METART_TRACE");
  return value && *value ? value : nullptr;
}

} // namespace

bool trace::enabled() { return directory() != nullptr; }

void trace::record(const char *what, int32_t mask, size_t bytes,
                   Clock::time_point begin, Clock::time_point end) {
  if (!enabled())
    return;
  Sink &s = sink();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.opened) {
    s.opened = true;
    std::string path = std::string(directory()) + "/trace." +
                       std::to_string(metart_world_rank()) + ".jsonl";
    s.file = std::fopen(path.c_str(), "w");
    if (!s.file)
      std::fprintf(stderr, "metart: cannot write the trace '%s'\n",
                   path.c_str());
  }
  if (!s.file)
    return;
  auto seconds = [](Clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  };
  std::fprintf(s.file,
               "{\"what\": \"%s\", \"mask\": %d, \"bytes\": %zu, \"begin\": "
               "%.9f, \"end\": %.9f}\n",
               what, mask, bytes, seconds(begin), seconds(end));
  // One line per step is cheap enough; events of a killed rank survive.
  if (std::string(what) == "step")
    std::fflush(s.file);
}
