//===- Gemm.h - matrix products through OpenBLAS ----------------*- C++ -*-===//
//
// The one place the CPU backend calls BLAS: a row-major GEMM over float or
// double that handles the empty cases BLAS rejects and sizes that do not fit
// BLAS's 32-bit integers.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_GEMM_H
#define METART_SRC_CPU_GEMM_H

#include <cstdint>

namespace metart::cpu {

/// One row-major matrix operand of a product: `rows` x `cols` as the product
/// reads it, stored transposed when `transposed`, with `ld` elements between
/// the starts of consecutive stored rows.
template <typename T> struct MatrixRef {
  const T *data;
  int64_t ld;
  bool transposed;
};

/// Whether every size fits BLAS's integers (32-bit in Debian's OpenBLAS).
bool fitsBlas(int64_t m, int64_t n, int64_t k);

/// `c = a * b + beta * c` for `a` m x k, `b` k x n and `c` m x n (leading
/// dimension `ldc`); `beta` is 0 or 1. With k = 0 the product is zero.
/// Sizes must satisfy `fitsBlas`.
void gemm(int64_t m, int64_t n, int64_t k, MatrixRef<float> a,
          MatrixRef<float> b, float beta, float *c, int64_t ldc);
void gemm(int64_t m, int64_t n, int64_t k, MatrixRef<double> a,
          MatrixRef<double> b, double beta, double *c, int64_t ldc);

} // namespace metart::cpu

#endif // METART_SRC_CPU_GEMM_H
