//===- Evaluation.h - statistics of an evaluation's tasks -------*- C++ -*-===//
//
// An evaluation scores each task's query loss after adaptation. A task whose
// loss is not finite, or above a threshold, has diverged: it is counted and
// left out of the mean and its confidence interval, so that one such task
// never turns the reported mean into NaN; the median is over every task, a
// diverged one counting as +infinity.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_TRAIN_EVALUATION_H
#define METART_SRC_TRAIN_EVALUATION_H

#include "metart/train.h"

#include <cstdio>
#include <string>
#include <vector>

namespace metart::train {

/// The statistics of the per-task `losses` after `steps` adaptation steps
/// (and of `accuracies`, when not null, over the same tasks); a task
/// diverged when its loss is not finite or above `divergeAbove` (> 0).
metart_eval_result summarizeEvaluation(int64_t steps,
                                       const std::vector<double> &losses,
                                       const std::vector<double> *accuracies,
                                       double divergeAbove);

/// `value` as JSON: a number, or null when it is not finite (JSON has no
/// NaN or infinity).
std::string jsonNumber(double value);

/// One `{"evaluation": {...}}` line of the metrics file (`loss` and its
/// interval null when every task diverged).
void writeEvaluationJson(FILE *metrics, const metart_eval_result &result);

} // namespace metart::train

#endif // METART_SRC_TRAIN_EVALUATION_H
