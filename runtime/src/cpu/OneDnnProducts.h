//===- OneDnnProducts.h - matrix products through oneDNN --------*- C++ -*-===//
//
// Meta-learning's products are batches of small GEMMs (one per task: 25
// products of 10 x 40 by 40 x 40 in sinusoid MAML), which OpenBLAS computes
// one call at a time with its per-call overhead and generic small-matrix
// path. oneDNN's matmul primitive takes the whole batch in one call and
// JIT-compiles a kernel for the shape (brgemm): 2-3x faster on those sizes
// (bench/products.sh). Transposed operands are strides of the memory
// descriptions, and a linear layer's bias is added inside the primitive.
//
// The choice is a rule, not a measurement, so that runs are reproducible
// bit for bit (resumed training, equivalence tests): f32 products oneDNN
// has a JIT kernel for run on oneDNN, on one thread below kSmallProduct
// multiply-adds (waking OpenMP's team costs more than it gains there) and
// on the backend's threads above; f64 and the rest stay on OpenBLAS.
// METART_MATMUL=blas turns oneDNN off for products.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_ONEDNNPRODUCTS_H
#define METART_SRC_CPU_ONEDNNPRODUCTS_H

#include "../KernelSizes.h"
#include "../Tensor.h"

#include <memory>
#include <string>

namespace metart::cpu {

class Workspace;

/// `batch` products `y_i = op(a_i) op(b_i) (+ bias_i)` of `[m, k]` by
/// `[k, n]`, operands stored transposed when their flag is set; the bias
/// is `[n]` shared by every entry or `[batch, n]` (`biasPerEntry`).
struct ProductSizes {
  int64_t batch, m, n, k;
  bool transposeA, transposeB;
  bool bias, biasPerEntry;
};

/// Below this many multiply-adds a product runs on one thread. Sinusoid
/// MAML's 25 x 10 x 40 x 40 products (400k) gain from two threads (0.150
/// -> 0.132 ms per meta-iteration, medians of 5) now that OpenMP's team,
/// shared with every CPU loop, is awake between calls; at 2^16 the
/// smaller ones lose what those gain.
constexpr int64_t kSmallProduct = int64_t(1) << 18;

class OneDnnProducts {
public:
  OneDnnProducts();
  ~OneDnnProducts();
  OneDnnProducts(const OneDnnProducts &) = delete;
  OneDnnProducts &operator=(const OneDnnProducts &) = delete;

  /// Whether oneDNN computes this product: built in, not turned off, f32,
  /// no empty dimension, and a non-reference implementation.
  bool handles(metart_dtype dtype, const ProductSizes &sizes);

  /// Computes the product (bias may be null when `sizes.bias` is false).
  KernelStatus run(const ProductSizes &sizes, Workspace &workspace,
                   const float *a, const float *b, const float *bias, float *y);

  /// The implementation oneDNN chose (e.g. "brg:avx512_core"), or "" when
  /// it does not handle the product.
  std::string implementation(const ProductSizes &sizes);

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace metart::cpu

#endif // METART_SRC_CPU_ONEDNNPRODUCTS_H
