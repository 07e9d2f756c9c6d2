//===- Normalization.cpp - normalisations on the CPU ----------------------===//
//
// Batch and layer normalisation with the biased variance and epsilon inside
// the square root, and the (log-)softmax shifted by the maximum. Statistics,
// exponentials and their sums are computed in double whatever the element
// type; the mean comes first and the variance is summed around it (two
// passes), as the reference does.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"
#include "Strided.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace metart::cpu {

/// Adds to `sums` (operand 1 of the space) the sums of `fn(x, statistic)`
/// over the reduced dimensions, `x` operand 0's element and `statistic` the
/// current value of `center` at the element's statistic.
template <typename T, typename Fn>
static void accumulate(const StridedSpace<3> &space, const T *x,
                       const double *center, double *sums, Fn fn) {
  forEachRowParallel(
      space, 1u << 1,
      [&](const int64_t *offset, int64_t length, const int64_t *stride) {
        const T *in = x + offset[0];
        double *sum = sums + offset[1];
        const double *c = center + offset[1];
        if (stride[1] == 0) {
          // Four partial sums break the chain of dependent additions, so
          // that the loop runs at the adder's throughput, not its latency.
          double partial[4] = {0, 0, 0, 0};
          int64_t j = 0;
          for (; j + 4 <= length; j += 4)
            for (int64_t k = 0; k < 4; ++k)
              partial[k] +=
                  fn(static_cast<double>(in[(j + k) * stride[0]]), *c);
          for (; j < length; ++j)
            partial[0] += fn(static_cast<double>(in[j * stride[0]]), *c);
          *sum += (partial[0] + partial[1]) + (partial[2] + partial[3]);
          return;
        }
        for (int64_t j = 0; j < length; ++j)
          sum[j * stride[1]] +=
              fn(static_cast<double>(in[j * stride[0]]), c[j * stride[1]]);
      });
}

template <typename T>
static KernelStatus batchNormOf(const BatchNormSizes &s, Workspace &workspace,
                                const T *x, const T *weight, const T *bias,
                                double epsilon, T *y) {
  size_t bytes = 2 * static_cast<size_t>(s.statistics) * sizeof(double);
  auto *mean = static_cast<double *>(workspace.get(bytes));
  if (!mean)
    return workspaceExhausted(bytes);
  double *deviation = mean + s.statistics;
  std::fill(mean, mean + 2 * s.statistics, 0.0);
  accumulate(s.space, x, mean, mean, [](double v, double) { return v; });
  for (int64_t i = 0; i < s.statistics; ++i)
    mean[i] /= static_cast<double>(s.count);
  accumulate(s.space, x, mean, deviation,
             [](double v, double m) { return (v - m) * (v - m); });
  for (int64_t i = 0; i < s.statistics; ++i)
    deviation[i] =
        std::sqrt(deviation[i] / static_cast<double>(s.count) + epsilon);
  forEachRowParallel(
      s.space, 1u << 0,
      [&](const int64_t *offset, int64_t length, const int64_t *stride) {
        const T *in = x + offset[0];
        T *out = y + offset[0];
        const double *m = mean + offset[1], *d = deviation + offset[1];
        const T *w = weight + offset[2], *b = bias + offset[2];
        if (stride[1] == 0 && stride[2] == 0) {
          // One statistic and one weight along the row: y = x * scale + shift.
          double scale = static_cast<double>(*w) / *d;
          double shift = static_cast<double>(*b) - *m * scale;
          for (int64_t j = 0; j < length; ++j)
            out[j * stride[0]] = static_cast<T>(
                static_cast<double>(in[j * stride[0]]) * scale + shift);
          return;
        }
        for (int64_t j = 0; j < length; ++j) {
          int64_t e = j * stride[0], st = j * stride[1], p = j * stride[2];
          double normalized = (static_cast<double>(in[e]) - m[st]) / d[st];
          out[e] = static_cast<T>(static_cast<double>(w[p]) * normalized +
                                  static_cast<double>(b[p]));
        }
      });
  return KernelStatus::ok();
}

KernelStatus CpuBackend::batchNorm(metart_dtype dtype,
                                   const BatchNormSizes &sizes, const void *x,
                                   const void *weight, const void *bias,
                                   double epsilon, void *y) {
  return withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    return batchNormOf(sizes, workspace, static_cast<const T *>(x),
                       static_cast<const T *>(weight),
                       static_cast<const T *>(bias), epsilon,
                       static_cast<T *>(y));
  });
}

template <typename T>
static void layerNormOf(const LayerNormSizes &s, const T *x, const T *weight,
                        const T *bias, double epsilon, T *y) {
  for (int64_t r = 0; r < s.rows; ++r) {
    const T *in = x + r * s.width;
    T *out = y + r * s.width;
    int64_t slice = r / s.rowsPerSlice;
    const T *w = weight + slice * s.width, *b = bias + slice * s.width;
    double mean = 0, variance = 0;
    for (int64_t i = 0; i < s.width; ++i)
      mean += static_cast<double>(in[i]);
    mean /= static_cast<double>(s.width);
    for (int64_t i = 0; i < s.width; ++i) {
      double centered = static_cast<double>(in[i]) - mean;
      variance += centered * centered;
    }
    variance /= static_cast<double>(s.width);
    double deviation = std::sqrt(variance + epsilon);
    for (int64_t i = 0; i < s.width; ++i)
      out[i] =
          static_cast<T>(static_cast<double>(w[i]) *
                             (static_cast<double>(in[i]) - mean) / deviation +
                         static_cast<double>(b[i]));
  }
}

KernelStatus CpuBackend::layerNorm(metart_dtype dtype,
                                   const LayerNormSizes &sizes, const void *x,
                                   const void *weight, const void *bias,
                                   double epsilon, void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    layerNormOf(sizes, static_cast<const T *>(x),
                static_cast<const T *>(weight), static_cast<const T *>(bias),
                epsilon, static_cast<T *>(y));
  });
  return KernelStatus::ok();
}

/// The (log-)softmax of `x` along the middle dimension of `[outer, axis,
/// inner]`. Rows of the axis are strided by `inner`; the loops run over
/// `inner` innermost, keeping one maximum and one sum per inner index in
/// `maximum` and `sum` (`inner` doubles each).
template <typename T>
static void softmaxOf(const AxisSizes &s, bool logarithm, const T *x, T *y,
                      double *maximum, double *sum) {
  int64_t n = s.axis, inner = s.inner;
  for (int64_t o = 0; o < s.outer; ++o) {
    const T *in = x + o * n * inner;
    T *out = y + o * n * inner;
    std::fill(maximum, maximum + inner,
              -std::numeric_limits<double>::infinity());
    std::fill(sum, sum + inner, 0.0);
    for (int64_t a = 0; a < n; ++a)
      for (int64_t i = 0; i < inner; ++i)
        maximum[i] =
            std::max(maximum[i], static_cast<double>(in[a * inner + i]));
    for (int64_t a = 0; a < n; ++a)
      for (int64_t i = 0; i < inner; ++i)
        sum[i] += std::exp(static_cast<double>(in[a * inner + i]) - maximum[i]);
    if (logarithm) {
      for (int64_t i = 0; i < inner; ++i)
        sum[i] = std::log(sum[i]);
      for (int64_t a = 0; a < n; ++a)
        for (int64_t i = 0; i < inner; ++i)
          out[a * inner + i] = static_cast<T>(
              static_cast<double>(in[a * inner + i]) - maximum[i] - sum[i]);
      continue;
    }
    for (int64_t a = 0; a < n; ++a)
      for (int64_t i = 0; i < inner; ++i)
        out[a * inner + i] = static_cast<T>(
            std::exp(static_cast<double>(in[a * inner + i]) - maximum[i]) /
            sum[i]);
  }
}

KernelStatus CpuBackend::softmax(metart_dtype dtype, const AxisSizes &sizes,
                                 bool logarithm, const void *x, void *y) {
  size_t bytes = 2 * static_cast<size_t>(sizes.inner) * sizeof(double);
  auto *maximum = static_cast<double *>(workspace.get(bytes));
  if (!maximum)
    return workspaceExhausted(bytes);
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    softmaxOf(sizes, logarithm, static_cast<const T *>(x), static_cast<T *>(y),
              maximum, maximum + sizes.inner);
  });
  return KernelStatus::ok();
}

} // namespace metart::cpu
