//===- Metrics.cpp - condense a run's metrics file ------------------------===//

#include "metac/Bench/RunRecord.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace metac::bench;
namespace json = llvm::json;

namespace {

double median(std::vector<double> values) {
  if (values.empty())
    return NAN;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double number(const json::Object &object, llvm::StringRef key) {
  std::optional<double> value = object.getNumber(key);
  return value ? *value : NAN;
}

/// Non-finite figures become null: a report never shows NaN.
json::Value finiteOrNull(double value) {
  return std::isfinite(value) ? json::Value(value) : json::Value(nullptr);
}

struct AxisTotals {
  double bytes = 0, seconds = 0, calls = 0, overlapped = 0;
};

} // namespace

llvm::Expected<json::Object>
metac::bench::summarizeMetrics(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return llvm::createStringError(
        file.getError(), "cannot read the metrics file %s: %s",
        path.str().c_str(), file.getError().message().c_str());
  std::vector<double> seconds, tasksPerSecond;
  double flops = NAN, peakDevice = 0, peakHost = 0, lastLoss = NAN;
  // Collectives of the first iteration apart, as its time is.
  llvm::StringMap<AxisTotals> comm, firstComm;
  json::Array evaluations;
  json::Value nonfinite = nullptr;
  json::Object balance;
  // `--profile`: seconds in each runtime entry point over the timed
  // iterations.
  json::Array profile;
  double profileIterations = 0, profileSeconds = 0;
  llvm::SmallVector<llvm::StringRef> lines;
  (*file)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (auto [index, line] : llvm::enumerate(lines)) {
    llvm::Expected<json::Value> parsed = json::parse(line);
    if (!parsed)
      return llvm::createStringError(
          "%s:%zu: not a JSON line: %s", path.str().c_str(), index + 1,
          llvm::toString(parsed.takeError()).c_str());
    json::Object *object = parsed->getAsObject();
    if (!object)
      continue;
    if (json::Object *evaluation = object->getObject("evaluation")) {
      evaluations.push_back(std::move(*evaluation));
      continue;
    }
    if (json::Array *functions = object->getArray("profile")) {
      profileIterations = number(*object, "iterations");
      for (json::Value &entry : *functions)
        if (json::Object *function = entry.getAsObject())
          profileSeconds += number(*function, "seconds");
      profile = std::move(*functions);
      continue;
    }
    if (json::Object *policy = object->getObject("nonfinite")) {
      nonfinite = std::move(*policy);
      continue;
    }
    if (json::Object *spread = object->getObject("balance")) {
      balance = std::move(*spread);
      continue;
    }
    if (!object->get("iteration"))
      continue;
    seconds.push_back(number(*object, "seconds"));
    tasksPerSecond.push_back(number(*object, "tasks_per_second"));
    flops = number(*object, "flops");
    lastLoss = number(*object, "meta_loss");
    peakDevice = std::max(peakDevice, number(*object, "peak_device_bytes"));
    peakHost = std::max(peakHost, number(*object, "peak_host_bytes"));
    if (json::Object *axes = object->getObject("comm"))
      for (auto &[axis, stats] : *axes)
        if (json::Object *s = stats.getAsObject()) {
          AxisTotals &totals =
              (seconds.size() == 1 ? firstComm : comm)[axis.str()];
          totals.bytes += number(*s, "bytes");
          totals.seconds += number(*s, "seconds");
          totals.calls += number(*s, "calls");
          // Only under --overlap (absent: nothing overlapped).
          totals.overlapped += s->getNumber("overlapped_seconds").value_or(0.0);
        }
  }
  if (seconds.empty())
    return llvm::createStringError("%s: no meta-iteration was recorded",
                                   path.str().c_str());
  // The first iteration warms caches (and builds a CUDA graph).
  std::vector<double> timed(seconds.begin() + (seconds.size() > 1),
                            seconds.end());
  double perIteration = median(timed);
  double mean = 0;
  for (double s : timed)
    mean += s / timed.size();
  double variance = 0;
  for (double s : timed)
    variance += (s - mean) * (s - mean) / std::max<size_t>(timed.size() - 1, 1);
  // tasks/s = meta_batch / seconds on every line.
  double metaBatch = std::round(tasksPerSecond.back() * seconds.back());

  json::Object summary;
  summary["iterations"] = static_cast<int64_t>(seconds.size());
  summary["seconds_per_iteration"] = finiteOrNull(perIteration);
  summary["seconds_per_iteration_mean"] = finiteOrNull(mean);
  summary["seconds_per_iteration_sd"] = finiteOrNull(std::sqrt(variance));
  summary["training_seconds"] = finiteOrNull([&] {
    double total = 0;
    for (double s : seconds)
      total += s;
    return total;
  }());
  summary["meta_batch"] = finiteOrNull(metaBatch);
  summary["tasks_per_second"] = finiteOrNull(metaBatch / perIteration);
  summary["flops_per_iteration"] = finiteOrNull(flops);
  summary["flops_per_second"] = finiteOrNull(flops / perIteration);
  summary["peak_device_bytes"] = peakDevice;
  summary["peak_host_bytes"] = peakHost;
  summary["final_meta_loss"] = finiteOrNull(lastLoss);
  json::Object axes;
  double commSeconds = 0, commBytes = 0, overlapped = 0;
  if (timed.size() == seconds.size())
    comm = std::move(firstComm);
  for (auto &[axis, totals] : comm) {
    double n = static_cast<double>(timed.size());
    axes[axis.str()] = json::Object{{"bytes", totals.bytes / n},
                                    {"seconds", totals.seconds / n},
                                    {"calls", totals.calls / n}};
    commSeconds += totals.seconds / n;
    commBytes += totals.bytes / n;
    overlapped += totals.overlapped / n;
  }
  summary["comm_per_iteration"] = std::move(axes);
  summary["comm_seconds_per_iteration"] = commSeconds;
  // Under --overlap: the part of the collectives' time hidden behind
  // compute (0 without).
  summary["comm_overlapped_seconds_per_iteration"] = finiteOrNull(overlapped);
  summary["comm_overlapped_fraction"] =
      finiteOrNull(commSeconds > 0 ? overlapped / commSeconds : 0.0);
  summary["comm_bytes_per_iteration"] = commBytes;
  if (!profile.empty() && profileIterations > 0) {
    summary["profile"] = std::move(profile);
    summary["profile_iterations"] = profileIterations;
    summary["calls_seconds_per_iteration"] =
        finiteOrNull(profileSeconds / profileIterations);
  }
  summary["evaluation"] = std::move(evaluations);
  summary["nonfinite"] = std::move(nonfinite);
  // Several ranks: the busiest rank's compute against the mean.
  if (!balance.empty())
    summary["balance"] = std::move(balance);
  return summary;
}
