//===- Timeline.cpp - a timeline of runtime calls -------------------------===//

#include "Timeline.h"

#include <cstdio>

using namespace metart;

void Timeline::enable(bool value) {
  on = value;
  if (on && !started) {
    started = true;
    origin = Clock::now();
  }
}

void Timeline::add(Event event) {
  if (events.size() >= kMaxEvents) {
    ++dropped;
    return;
  }
  events.push_back(event);
}

static double microseconds(Timeline::Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

void Timeline::call(const char *function, Clock::time_point begin,
                    Clock::time_point end) {
  add({function, 0, microseconds(begin - origin), microseconds(end - begin)});
}

void Timeline::iteration(int64_t iteration, Clock::time_point begin,
                         Clock::time_point end) {
  add({nullptr, iteration, microseconds(begin - origin),
       microseconds(end - begin)});
}

std::string Timeline::json(int rank) const {
  std::string out;
  char line[320];
  out += "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"truncated\": ";
  out += truncated() ? "true" : "false";
  std::snprintf(line, sizeof line, ", \"dropped_events\": %zu}", dropped);
  out += line;
  out += ", \"traceEvents\": [\n";
  std::snprintf(line, sizeof line,
                "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
                "\"args\": {\"name\": \"rank %d\"}},\n"
                "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
                "\"tid\": 0, \"args\": {\"name\": \"runtime calls\"}},\n"
                "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, "
                "\"tid\": 1, \"args\": {\"name\": \"meta-iterations\"}}",
                rank, rank, rank, rank);
  out += line;
  for (const Event &e : events) {
    if (e.name)
      std::snprintf(line, sizeof line,
                    ",\n{\"name\": \"%s\", \"cat\": \"runtime\", \"ph\": "
                    "\"X\", \"pid\": %d, \"tid\": 0, \"ts\": %.3f, \"dur\": "
                    "%.3f}",
                    e.name, rank, e.beginUs, e.durationUs);
    else
      std::snprintf(line, sizeof line,
                    ",\n{\"name\": \"meta-iteration %lld\", \"cat\": "
                    "\"iteration\", \"ph\": \"X\", \"pid\": %d, \"tid\": 1, "
                    "\"ts\": %.3f, \"dur\": %.3f, \"args\": {\"iteration\": "
                    "%lld}}",
                    static_cast<long long>(e.iteration), rank, e.beginUs,
                    e.durationUs, static_cast<long long>(e.iteration));
    out += line;
  }
  out += "\n]}\n";
  return out;
}

std::string metart::timelinePath(const std::string &path, int rank, int ranks) {
  if (ranks <= 1)
    return path;
  std::string suffix = ".rank" + std::to_string(rank);
  const std::string json = ".json";
  if (path.size() > json.size() &&
      path.compare(path.size() - json.size(), json.size(), json) == 0)
    return path.substr(0, path.size() - json.size()) + suffix + json;
  return path + suffix;
}
