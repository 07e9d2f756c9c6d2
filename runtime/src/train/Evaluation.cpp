//===- Evaluation.cpp - statistics of an evaluation's tasks ---------------===//

#include "Evaluation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

using namespace metart::train;

namespace {

/// The mean of `values` and the half-width of its 95% confidence interval,
/// 1.96 sample standard deviations over the square root of the count.
std::pair<double, double> meanAndInterval(const std::vector<double> &values) {
  if (values.empty())
    return {0, 0};
  double mean = 0, squares = 0;
  for (double v : values)
    mean += v;
  mean /= values.size();
  for (double v : values)
    squares += (v - mean) * (v - mean);
  double sd = values.size() > 1 ? std::sqrt(squares / (values.size() - 1)) : 0;
  return {mean, 1.96 * sd / std::sqrt(double(values.size()))};
}

/// The median of `values` (the lower middle one of an even count).
double medianOf(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t middle = (values.size() - 1) / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  return values[middle];
}

} // namespace

metart_eval_result metart::train::summarizeEvaluation(
    int64_t steps, const std::vector<double> &losses,
    const std::vector<double> *accuracies, double divergeAbove) {
  metart_eval_result result{};
  std::vector<double> kept, keptAccuracies, ranked;
  for (size_t i = 0; i < losses.size(); ++i) {
    double loss = losses[i];
    bool finite = std::isfinite(loss);
    if (!finite)
      ++result.nonfinite;
    if (!finite || (divergeAbove > 0 && loss > divergeAbove)) {
      ++result.diverged;
      ranked.push_back(std::numeric_limits<double>::infinity());
      continue;
    }
    ranked.push_back(loss);
    kept.push_back(loss);
    if (accuracies)
      keptAccuracies.push_back((*accuracies)[i]);
  }
  result.steps = steps;
  result.count = static_cast<int64_t>(losses.size());
  std::tie(result.mean, result.ci95) = meanAndInterval(kept);
  result.median = medianOf(ranked);
  result.diverge_above = divergeAbove;
  if (accuracies) {
    result.has_accuracy = 1;
    std::tie(result.accuracy, result.accuracy_ci95) =
        meanAndInterval(keptAccuracies);
  }
  return result;
}

std::string metart::train::jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

void metart::train::writeEvaluationJson(FILE *metrics,
                                        const metart_eval_result &r) {
  // Without a task that stayed finite, the mean is undefined: null.
  bool some = r.diverged < r.count;
  std::fprintf(
      metrics,
      "{\"evaluation\": {\"steps\": %lld, \"tasks\": %lld, "
      "\"loss\": %s, \"loss_ci95\": %s, \"median\": %s, "
      "\"diverged\": %lld, \"nonfinite\": %lld, "
      "\"diverge_above\": %s",
      static_cast<long long>(r.steps), static_cast<long long>(r.count),
      some ? jsonNumber(r.mean).c_str() : "null",
      some ? jsonNumber(r.ci95).c_str() : "null", jsonNumber(r.median).c_str(),
      static_cast<long long>(r.diverged), static_cast<long long>(r.nonfinite),
      r.diverge_above > 0 ? jsonNumber(r.diverge_above).c_str() : "null");
  if (r.has_accuracy)
    std::fprintf(metrics, ", \"accuracy\": %s, \"accuracy_ci95\": %s",
                 some ? jsonNumber(r.accuracy).c_str() : "null",
                 some ? jsonNumber(r.accuracy_ci95).c_str() : "null");
  std::fprintf(metrics, "}}\n");
  std::fflush(metrics);
}
