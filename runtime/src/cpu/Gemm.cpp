//===- Gemm.cpp - matrix products through OpenBLAS ------------------------===//

#include "Gemm.h"

#include <cblas.h>

#include <limits>

namespace metart::cpu {

bool fitsBlas(int64_t m, int64_t n, int64_t k) {
  int64_t limit = std::numeric_limits<blasint>::max();
  return m <= limit && n <= limit && k <= limit;
}

static CBLAS_TRANSPOSE transposeOf(bool transposed) {
  return transposed ? CblasTrans : CblasNoTrans;
}

/// Whether the product has nothing to compute from `a` and `b`: with m or n
/// zero `c` is empty; with k zero, `c = beta * c`, which this does.
template <typename T>
static bool handleEmpty(int64_t m, int64_t n, int64_t k, T beta, T *c,
                        int64_t ldc) {
  if (m == 0 || n == 0)
    return true;
  if (k != 0)
    return false;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
  return true;
}

void gemm(int64_t m, int64_t n, int64_t k, MatrixRef<float> a,
          MatrixRef<float> b, float beta, float *c, int64_t ldc) {
  if (handleEmpty(m, n, k, beta, c, ldc))
    return;
  cblas_sgemm(CblasRowMajor, transposeOf(a.transposed),
              transposeOf(b.transposed), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a.data,
              static_cast<blasint>(a.ld), b.data, static_cast<blasint>(b.ld),
              beta, c, static_cast<blasint>(ldc));
}

void gemm(int64_t m, int64_t n, int64_t k, MatrixRef<double> a,
          MatrixRef<double> b, double beta, double *c, int64_t ldc) {
  if (handleEmpty(m, n, k, beta, c, ldc))
    return;
  cblas_dgemm(CblasRowMajor, transposeOf(a.transposed),
              transposeOf(b.transposed), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0, a.data,
              static_cast<blasint>(a.ld), b.data, static_cast<blasint>(b.ld),
              beta, c, static_cast<blasint>(ldc));
}

} // namespace metart::cpu
