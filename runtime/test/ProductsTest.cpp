//===- ProductsTest.cpp - oneDNN's products against OpenBLAS's f64 --------===//
//
// The f32 linear layers and matrix products (oneDNN where it computes them)
// against the f64 ones (OpenBLAS, checked against the reference
// interpreter by metart.KernelsVsInterpreter) on the same values: batched
// task weights with a per-task bias, a shared weight and bias over many
// rows, every transpose combination, single rows, columns and terms, and
// sizes past the one-thread threshold. Then which products oneDNN takes.
//
//===----------------------------------------------------------------------===//

#include "cpu/OneDnnProducts.h"

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace metart;

namespace {

/// Values of both types: f32 ones and their exact f64 copies.
struct Values {
  std::vector<float> f32;
  std::vector<double> f64;
  Values(size_t n, std::mt19937 &random) : f32(n), f64(n) {
    std::uniform_real_distribution<float> uniform(-1, 1);
    for (size_t i = 0; i < n; ++i)
      f64[i] = f32[i] = uniform(random);
  }
};

size_t count(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= size_t(d);
  return n;
}

/// A CPU context for each case of `Case`.
template <typename Case>
class ProductFixture : public ::testing::TestWithParam<Case> {
protected:
  void SetUp() override {
    metart_context_options options = {METART_BACKEND_CPU, 0, 0};
    ASSERT_EQ(metart_context_create(&options, &context), METART_OK);
  }
  void TearDown() override { metart_context_destroy(context); }

  template <typename T>
  static metart_tensor tensor(std::vector<T> &values,
                              const std::vector<int64_t> &shape) {
    return {values.data(), sizeof(T) == 4 ? METART_F32 : METART_F64,
            int32_t(shape.size()), shape.data()};
  }

  /// Expects `got` (f32) to match `want` (f64) to f32 rounding of sums of
  /// `terms` products of values in [-1, 1] (plus a bias).
  static void expectClose(const std::vector<float> &got,
                          const std::vector<double> &want, int64_t terms) {
    ASSERT_EQ(got.size(), want.size());
    double tolerance = 4e-7 * std::sqrt(double(terms + 1)) * 8 + 1e-6;
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], tolerance)
          << "element " << i << " of " << got.size();
  }

  metart_context *context = nullptr;
};

struct LinearCase {
  const char *name;
  std::vector<int64_t> x, weight;
  bool bias;
};

using Linears = ProductFixture<LinearCase>;

TEST_P(Linears, MatchTheF64Kernels) {
  const LinearCase &c = GetParam();
  std::vector<int64_t> bShape(c.weight.begin(), c.weight.end() - 1);
  std::vector<int64_t> yShape(c.x.begin(), c.x.end() - 1);
  yShape.push_back(c.weight[c.weight.size() - 2]);
  std::mt19937 random(11);
  Values x(count(c.x), random), w(count(c.weight), random),
      b(count(bShape), random);
  std::vector<float> y32(count(yShape));
  std::vector<double> y64(count(yShape));
  metart_tensor x32 = tensor(x.f32, c.x), w32 = tensor(w.f32, c.weight),
                b32 = tensor(b.f32, bShape), y32t = tensor(y32, yShape);
  metart_tensor x64 = tensor(x.f64, c.x), w64 = tensor(w.f64, c.weight),
                b64 = tensor(b.f64, bShape), y64t = tensor(y64, yShape);
  ASSERT_EQ(
      metart_nn_linear(context, &x32, &w32, c.bias ? &b32 : nullptr, &y32t),
      METART_OK)
      << metart_context_last_error(context);
  ASSERT_EQ(
      metart_nn_linear(context, &x64, &w64, c.bias ? &b64 : nullptr, &y64t),
      METART_OK);
  expectClose(y32, y64, c.x.back());
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Linears,
    ::testing::Values(
        // Sinusoid MAML's layers: 25 tasks, each with its own weights.
        LinearCase{"TaskWeights", {25, 10, 40}, {25, 40, 40}, true},
        LinearCase{"TaskInputLayer", {25, 10, 1}, {25, 40, 1}, true},
        LinearCase{"TaskOutputLayer", {25, 10, 40}, {25, 1, 40}, true},
        LinearCase{"TaskNoBias", {25, 10, 40}, {25, 40, 40}, false},
        // A shared weight over batched rows.
        LinearCase{"Shared", {4, 25, 64}, {5, 64}, true},
        LinearCase{"SharedNoBias", {300, 1}, {40, 1}, false},
        // Past the one-thread threshold (2^18 multiply-adds).
        LinearCase{"Large", {256, 512}, {384, 512}, true},
        // Rows of tasks inside batch dimensions of the weight's.
        LinearCase{"NestedBatch", {2, 3, 4, 6}, {2, 3, 5, 6}, true}),
    [](const ::testing::TestParamInfo<LinearCase> &info) {
      return std::string(info.param.name);
    });

struct MatmulCase {
  const char *name;
  int64_t batch, m, n, k;
  bool transposeA, transposeB;
};

using Matmuls = ProductFixture<MatmulCase>;

TEST_P(Matmuls, MatchTheF64Kernels) {
  const MatmulCase &c = GetParam();
  std::vector<int64_t> aShape = {c.batch, c.transposeA ? c.k : c.m,
                                 c.transposeA ? c.m : c.k};
  std::vector<int64_t> bShape = {c.batch, c.transposeB ? c.n : c.k,
                                 c.transposeB ? c.k : c.n};
  std::vector<int64_t> yShape = {c.batch, c.m, c.n};
  std::mt19937 random(13);
  Values a(count(aShape), random), b(count(bShape), random);
  std::vector<float> y32(count(yShape), 7.0f);
  std::vector<double> y64(count(yShape));
  metart_tensor a32 = tensor(a.f32, aShape), b32 = tensor(b.f32, bShape),
                y32t = tensor(y32, yShape);
  metart_tensor a64 = tensor(a.f64, aShape), b64 = tensor(b.f64, bShape),
                y64t = tensor(y64, yShape);
  ASSERT_EQ(
      metart_nn_matmul(context, &a32, &b32, c.transposeA, c.transposeB, &y32t),
      METART_OK)
      << metart_context_last_error(context);
  ASSERT_EQ(
      metart_nn_matmul(context, &a64, &b64, c.transposeA, c.transposeB, &y64t),
      METART_OK);
  expectClose(y32, y64, c.k);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Matmuls,
    ::testing::Values(
        // The backward products of sinusoid MAML's layers.
        MatmulCase{"WeightGradient", 25, 40, 40, 10, true, false},
        MatmulCase{"InputGradient", 25, 10, 40, 40, false, false},
        MatmulCase{"BothTransposed", 25, 40, 10, 40, true, true},
        MatmulCase{"RightTransposed", 3, 7, 5, 9, false, true},
        MatmulCase{"SingleRow", 25, 1, 40, 10, true, false},
        MatmulCase{"SingleColumn", 25, 10, 1, 40, false, true},
        MatmulCase{"SingleTerm", 4, 6, 5, 1, false, false},
        MatmulCase{"Large", 2, 256, 384, 512, false, true},
        // Empty products stay on OpenBLAS's path (k = 0: zeros).
        MatmulCase{"NoTerms", 2, 3, 4, 0, false, false},
        MatmulCase{"NoRows", 2, 0, 4, 3, true, false}),
    [](const ::testing::TestParamInfo<MatmulCase> &info) {
      return std::string(info.param.name);
    });

cpu::ProductSizes sinusoidLayer() {
  return {25, 10, 40, 40, false, true, true, true};
}

TEST(ProductChoice, OneDnnTakesF32) {
#ifdef METART_HAVE_DNNL
  cpu::OneDnnProducts products;
  EXPECT_TRUE(products.handles(METART_F32, sinusoidLayer()));
  EXPECT_FALSE(products.handles(METART_F64, sinusoidLayer()));
  cpu::ProductSizes empty = sinusoidLayer();
  empty.k = 0;
  EXPECT_FALSE(products.handles(METART_F32, empty));
  std::string implementation = products.implementation(sinusoidLayer());
  EXPECT_FALSE(implementation.empty());
  EXPECT_NE(implementation.rfind("ref", 0), 0u) << implementation;
#else
  GTEST_SKIP() << "metart was built without oneDNN";
#endif
}

TEST(ProductChoice, EnvironmentKeepsBlas) {
  ::setenv("METART_MATMUL", "blas", 1);
  cpu::OneDnnProducts products;
  ::unsetenv("METART_MATMUL");
  EXPECT_FALSE(products.handles(METART_F32, sinusoidLayer()));
}

} // namespace
