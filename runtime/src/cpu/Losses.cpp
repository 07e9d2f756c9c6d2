//===- Losses.cpp - losses on the CPU -------------------------------------===//
//
// Mean squared error and softmax cross-entropy: one mean per batch entry
// over its samples, accumulated in double. The cross-entropy of a sample is
// log(sum_c exp(z_c - m)) - (z_label - m) with m the row's maximum, which
// keeps the precision of a confident, correct prediction's small loss.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace metart::cpu {

template <typename T>
static void mseLossOf(const LossSizes &s, const T *prediction, const T *target,
                      T *y) {
  for (int64_t b = 0; b < s.entries; ++b) {
    const T *p = prediction + b * s.samples, *t = target + b * s.samples;
    double sum = 0;
    for (int64_t i = 0; i < s.samples; ++i) {
      double difference = static_cast<double>(p[i]) - static_cast<double>(t[i]);
      sum += difference * difference;
    }
    y[b] = static_cast<T>(sum / static_cast<double>(s.samples));
  }
}

KernelStatus CpuBackend::mseLoss(metart_dtype dtype, const LossSizes &sizes,
                                 const void *prediction, const void *target,
                                 void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    mseLossOf(sizes, static_cast<const T *>(prediction),
              static_cast<const T *>(target), static_cast<T *>(y));
  });
  return KernelStatus::ok();
}

/// -log_softmax(row)[label] for one row of `classes` logits.
template <typename T>
static double crossEntropyOf(const T *row, int64_t classes, int64_t label) {
  double maximum = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < classes; ++c)
    maximum = std::max(maximum, static_cast<double>(row[c]));
  double exponentials = 0;
  for (int64_t c = 0; c < classes; ++c)
    exponentials += std::exp(static_cast<double>(row[c]) - maximum);
  return std::log(exponentials) - (static_cast<double>(row[label]) - maximum);
}

/// Fails on the first label outside [0, classes).
template <typename I>
static KernelStatus checkLabels(const LossSizes &s, const I *labels) {
  int64_t count = s.entries * s.samples;
  for (int64_t i = 0; i < count; ++i)
    if (labels[i] < 0 || labels[i] >= s.classes)
      return {METART_ERROR_OUT_OF_RANGE,
              "label " + std::to_string(labels[i]) + " at position " +
                  std::to_string(i) + " is out of range [0, " +
                  std::to_string(s.classes) + ")"};
  return KernelStatus::ok();
}

template <typename T, typename I>
static KernelStatus crossEntropyLossOf(const LossSizes &s, const T *logits,
                                       const I *labels, T *y) {
  if (KernelStatus status = checkLabels(s, labels); status.failed())
    return status;
  for (int64_t b = 0; b < s.entries; ++b) {
    double sum = 0;
    for (int64_t i = b * s.samples; i < (b + 1) * s.samples; ++i)
      sum += crossEntropyOf(logits + i * s.classes, s.classes,
                            static_cast<int64_t>(labels[i]));
    y[b] = static_cast<T>(sum / static_cast<double>(s.samples));
  }
  return KernelStatus::ok();
}

KernelStatus CpuBackend::crossEntropyLoss(metart_dtype dtype,
                                          metart_dtype labelType,
                                          const LossSizes &sizes,
                                          const void *logits,
                                          const void *labels, void *y) {
  return withFloatAndIndex(dtype, labelType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    return crossEntropyLossOf(sizes, static_cast<const T *>(logits),
                              static_cast<const I *>(labels),
                              static_cast<T *>(y));
  });
}

template <typename T, typename I>
static KernelStatus accuracyOf(const LossSizes &s, const T *logits,
                               const I *labels, T *y) {
  if (KernelStatus status = checkLabels(s, labels); status.failed())
    return status;
  for (int64_t b = 0; b < s.entries; ++b) {
    int64_t correct = 0;
    for (int64_t i = b * s.samples; i < (b + 1) * s.samples; ++i) {
      const T *row = logits + i * s.classes;
      // The first maximum wins ties, as torch.argmax.
      int64_t best = 0;
      for (int64_t c = 1; c < s.classes; ++c)
        if (row[c] > row[best])
          best = c;
      correct += best == static_cast<int64_t>(labels[i]);
    }
    y[b] = static_cast<T>(static_cast<double>(correct) /
                          static_cast<double>(s.samples));
  }
  return KernelStatus::ok();
}

KernelStatus CpuBackend::accuracy(metart_dtype dtype, metart_dtype labelType,
                                  const LossSizes &sizes, const void *logits,
                                  const void *labels, void *y) {
  return withFloatAndIndex(dtype, labelType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    return accuracyOf(sizes, static_cast<const T *>(logits),
                      static_cast<const I *>(labels), static_cast<T *>(y));
  });
}

} // namespace metart::cpu
