//===- Linear.cpp - affine layers and matrix products on the CPU ----------===//
//
// f32 products that oneDNN computes take one oneDNN call for the whole
// batch (OneDnnProducts.h); the rest are GEMMs through OpenBLAS, as
// follows. `linear` makes one GEMM per weight slice:
// with an unbatched weight the whole input is one `[rows, in] x [in, out]`
// product; with weights batched over tasks each task's rows are one. The
// bias is written first and the product added to it. `matmul` makes one
// GEMM per batch entry, reading transposed operands through BLAS's flags.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"
#include "Gemm.h"

namespace metart::cpu {

/// The status of a product whose sizes do not fit BLAS.
static KernelStatus tooLargeForBlas(int64_t m, int64_t n, int64_t k) {
  return {METART_ERROR_UNSUPPORTED,
          "a product of sizes m = " + std::to_string(m) +
              ", n = " + std::to_string(n) + ", k = " + std::to_string(k) +
              " exceeds BLAS's 32-bit sizes"};
}

template <typename T>
static void linearOf(const LinearSizes &s, const T *x, const T *weight,
                     const T *bias, T *y) {
  for (int64_t slice = 0; slice < s.slices; ++slice) {
    const T *xs = x + slice * s.rowsPerSlice * s.in;
    const T *ws = weight + slice * s.out * s.in;
    T *ys = y + slice * s.rowsPerSlice * s.out;
    if (bias) {
      const T *bs = bias + slice * s.out;
      for (int64_t r = 0; r < s.rowsPerSlice; ++r)
        for (int64_t o = 0; o < s.out; ++o)
          ys[r * s.out + o] = bs[o];
    }
    // y_s = x_s w_s^T (+ y_s): w_s is stored [out, in], read transposed.
    gemm(s.rowsPerSlice, s.out, s.in, MatrixRef<T>{xs, s.in, false},
         MatrixRef<T>{ws, s.in, true}, bias ? T(1) : T(0), ys, s.out);
  }
}

KernelStatus CpuBackend::linear(metart_dtype dtype, const LinearSizes &sizes,
                                const void *x, const void *weight,
                                const void *bias, void *y) {
  // Per slice, x [rows, in] times the weight [out, in] read transposed.
  ProductSizes product{
      sizes.slices, sizes.rowsPerSlice, sizes.out,       sizes.in, false,
      true,         bias != nullptr,    sizes.slices > 1};
  if (products.handles(dtype, product))
    return products.run(product, workspace, static_cast<const float *>(x),
                        static_cast<const float *>(weight),
                        static_cast<const float *>(bias),
                        static_cast<float *>(y));
  if (!fitsBlas(sizes.rowsPerSlice, sizes.out, sizes.in))
    return tooLargeForBlas(sizes.rowsPerSlice, sizes.out, sizes.in);
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    linearOf(sizes, static_cast<const T *>(x), static_cast<const T *>(weight),
             static_cast<const T *>(bias), static_cast<T *>(y));
  });
  return KernelStatus::ok();
}

template <typename T>
static void matmulOf(const MatmulSizes &s, const T *a, const T *b, T *y) {
  // Stored shapes: a is [m, k] or, transposed, [k, m]; b is [k, n] or [n, k].
  int64_t lda = s.transposeA ? s.m : s.k;
  int64_t ldb = s.transposeB ? s.k : s.n;
  for (int64_t i = 0; i < s.batch; ++i)
    gemm(s.m, s.n, s.k, MatrixRef<T>{a + i * s.m * s.k, lda, s.transposeA},
         MatrixRef<T>{b + i * s.k * s.n, ldb, s.transposeB}, T(0),
         y + i * s.m * s.n, s.n);
}

KernelStatus CpuBackend::matmul(metart_dtype dtype, const MatmulSizes &sizes,
                                const void *a, const void *b, void *y) {
  ProductSizes product{sizes.batch,      sizes.m,          sizes.n, sizes.k,
                       sizes.transposeA, sizes.transposeB, false,   false};
  if (products.handles(dtype, product))
    return products.run(product, workspace, static_cast<const float *>(a),
                        static_cast<const float *>(b), nullptr,
                        static_cast<float *>(y));
  if (!fitsBlas(sizes.m, sizes.n, sizes.k))
    return tooLargeForBlas(sizes.m, sizes.n, sizes.k);
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    matmulOf(sizes, static_cast<const T *>(a), static_cast<const T *>(b),
             static_cast<T *>(y));
  });
  return KernelStatus::ok();
}

} // namespace metart::cpu
