//===- Compression.cpp - top-k and PowerSGD all-reduces -------------------===//

#include "Compression.h"

#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

using namespace metart;
using namespace metart::comm;

void CompressionStateDeleter::operator()(CompressionState *s) const {
  delete s;
}

int64_t comm::topKCount(int64_t n, double ratio) {
  return std::clamp<int64_t>(std::llround(ratio * double(n)), 1,
                             std::max<int64_t>(n, 1));
}

size_t comm::topKBytes(int64_t n, double ratio) {
  return size_t(topKCount(n, ratio)) * 2 * sizeof(int32_t);
}

KernelStatus comm::topKAllReduce(Transport &transport, int mask,
                                 int64_t groupSize, const float *x, float *y,
                                 int64_t n, double ratio,
                                 CompressionSite &site) {
  if (n > INT32_MAX)
    return {METART_ERROR_INVALID_ARGUMENT,
            "top-k compression indexes at most 2^31 elements, got " +
                std::to_string(n)};
  site.residual.resize(n, 0.0f);
  std::vector<float> &acc = site.residual;
  for (int64_t i = 0; i < n; ++i)
    acc[i] += x[i];
  int64_t k = topKCount(n, ratio);
  // The k largest magnitudes; ties go to the lower index, so that the
  // choice does not depend on the library's partitioning.
  std::vector<int32_t> index(n);
  std::iota(index.begin(), index.end(), 0);
  auto larger = [&](int32_t a, int32_t b) {
    float ma = std::fabs(acc[a]), mb = std::fabs(acc[b]);
    return ma > mb || (ma == mb && a < b);
  };
  std::nth_element(index.begin(), index.begin() + (k - 1), index.end(), larger);
  std::sort(index.begin(), index.begin() + k);
  // Index-value pairs (the value's bits in an int32), sent; what is sent
  // leaves the residual.
  std::vector<int32_t> mine(2 * k), all(2 * k * groupSize);
  for (int64_t j = 0; j < k; ++j) {
    int32_t i = index[j];
    mine[2 * j] = i;
    std::memcpy(&mine[2 * j + 1], &acc[i], sizeof(float));
    acc[i] = 0.0f;
  }
  if (KernelStatus s =
          transport.allGather(mask, mine.data(), all.data(), 2 * k, METART_I32);
      s.failed())
    return s;
  // Added in group order: every rank gets the same bits.
  std::fill(y, y + n, 0.0f);
  for (int64_t j = 0; j < k * groupSize; ++j) {
    float value;
    std::memcpy(&value, &all[2 * j + 1], sizeof(float));
    int32_t i = all[2 * j];
    if (i < 0 || i >= n)
      return {METART_ERROR_BACKEND, "top-k all-reduce received index " +
                                        std::to_string(i) + " outside [0, " +
                                        std::to_string(n) + ")"};
    y[i] += value;
  }
  return KernelStatus::ok();
}

bool comm::powerSgdCompresses(int64_t rows, int64_t cols, int64_t rank) {
  return rank >= 1 && (rows + cols) * rank < rows * cols;
}

size_t comm::powerSgdBytes(int64_t rows, int64_t cols, int64_t rank) {
  return size_t(rows + cols) * size_t(rank) * sizeof(float);
}

namespace {

/// Makes the columns of `p` (rows x rank, row-major) orthonormal (modified
/// Gram-Schmidt, in f64); a column that vanishes becomes zero.
void orthonormalize(float *p, int64_t rows, int64_t rank) {
  for (int64_t c = 0; c < rank; ++c) {
    for (int64_t prev = 0; prev < c; ++prev) {
      double dot = 0;
      for (int64_t r = 0; r < rows; ++r)
        dot += double(p[r * rank + c]) * p[r * rank + prev];
      for (int64_t r = 0; r < rows; ++r)
        p[r * rank + c] -= float(dot * p[r * rank + prev]);
    }
    double norm = 0;
    for (int64_t r = 0; r < rows; ++r)
      norm += double(p[r * rank + c]) * p[r * rank + c];
    norm = std::sqrt(norm);
    for (int64_t r = 0; r < rows; ++r)
      p[r * rank + c] = norm > 1e-30 ? float(p[r * rank + c] / norm) : 0.0f;
  }
}

int blasInt(int64_t v) { return static_cast<int>(v); }

} // namespace

KernelStatus comm::powerSgdAllReduce(Transport &transport, int mask,
                                     const float *x, float *y, int64_t rows,
                                     int64_t cols, int64_t rank,
                                     CompressionSite &site) {
  if (rows * cols > INT32_MAX)
    return {METART_ERROR_INVALID_ARGUMENT,
            "PowerSGD compresses matrices of at most 2^31 elements"};
  int64_t n = rows * cols;
  site.residual.resize(n, 0.0f);
  std::vector<float> &m = site.residual;
  for (int64_t i = 0; i < n; ++i)
    m[i] += x[i];
  // The first Q: the same standard normal draws on every rank.
  if (site.q.size() != size_t(cols * rank)) {
    site.q.resize(cols * rank);
    std::mt19937_64 engine(0x5eed + uint64_t(rows) * 131 + uint64_t(cols));
    std::normal_distribution<float> normal;
    for (float &v : site.q)
      v = normal(engine);
  }
  // P = M Q, summed over the group, orthonormalized (identically on every
  // rank: the same P everywhere).
  std::vector<float> p(rows * rank), q(cols * rank);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasInt(rows),
              blasInt(rank), blasInt(cols), 1.0f, m.data(), blasInt(cols),
              site.q.data(), blasInt(rank), 0.0f, p.data(), blasInt(rank));
  if (KernelStatus s = transport.allReduce(
          mask, p.data(), p.data(), rows * rank, METART_F32, Reduction::Sum);
      s.failed())
    return s;
  orthonormalize(p.data(), rows, rank);
  // Q = M^T P: this rank's share, then the group's sum.
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasInt(cols),
              blasInt(rank), blasInt(rows), 1.0f, m.data(), blasInt(cols),
              p.data(), blasInt(rank), 0.0f, q.data(), blasInt(rank));
  // What this rank's share of the approximation leaves out stays:
  // residual = M - P (M^T P)^T.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasInt(rows),
              blasInt(cols), blasInt(rank), -1.0f, p.data(), blasInt(rank),
              q.data(), blasInt(rank), 1.0f, m.data(), blasInt(cols));
  if (KernelStatus s = transport.allReduce(
          mask, q.data(), q.data(), cols * rank, METART_F32, Reduction::Sum);
      s.failed())
    return s;
  // y = P Q^T; Q is the next iteration's start.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasInt(rows),
              blasInt(cols), blasInt(rank), 1.0f, p.data(), blasInt(rank),
              q.data(), blasInt(rank), 0.0f, y, blasInt(cols));
  site.q = std::move(q);
  return KernelStatus::ok();
}
