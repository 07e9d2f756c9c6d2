//===- OptimizerTest.cpp - SGD and Adam(W) against PyTorch's rules --------===//
//
// Three steps of each optimizer against values computed by hand (one
// parameter, a constant gradient) and against the textbook formulas of
// torch.optim.SGD / Adam / AdamW written out here, on a vector whose
// gradient changes every step, in f64 and f32.
//
//===----------------------------------------------------------------------===//

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

class Optimizers : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(metart_context_create(nullptr, &context), METART_OK);
  }
  void TearDown() override { metart_context_destroy(context); }

  metart_context *context = nullptr;
};

/// A 1-d tensor viewing a vector, which must outlive it.
class Vector {
public:
  template <typename T>
  explicit Vector(std::vector<T> &values)
      : size(static_cast<int64_t>(values.size())), view{values.data(),
                                                        sizeof(T) == 4
                                                            ? METART_F32
                                                            : METART_F64,
                                                        1, &size} {}
  Vector(const Vector &) = delete;
  Vector &operator=(const Vector &) = delete;

  const metart_tensor *get() const { return &view; }

private:
  int64_t size;
  metart_tensor view;
};

/// A step count: an i64 scalar tensor.
class StepCount {
public:
  explicit StepCount(int64_t value) : value(value) {}
  StepCount(const StepCount &) = delete;
  StepCount &operator=(const StepCount &) = delete;

  const metart_tensor *get() const { return &view; }
  int64_t value;

private:
  metart_tensor view{&value, METART_I64, 0, nullptr};
};

TEST_F(Optimizers, IncrementCountsSteps) {
  StepCount count(41);
  ASSERT_EQ(metart_increment(context, count.get(), nullptr), METART_OK);
  EXPECT_EQ(count.value, 42);
}

TEST_F(Optimizers, SgdWithMomentumAndWeightDecayByHand) {
  // p = 1, g = 0.5, lr = 0.1, momentum = 0.9, weight_decay = 0.01:
  //   d1 = 0.51,       buf1 = 0.51,       p1 = 0.949
  //   d2 = 0.50949,    buf2 = 0.96849,    p2 = 0.852151
  //   d3 = 0.50852151, buf3 = 1.38016251, p3 = 0.714134749
  std::vector<double> p = {1}, g = {0.5}, buf = {0};
  Vector pt(p), gt(g), bt(buf);
  double expected[] = {0.949, 0.852151, 0.714134749};
  double buffers[] = {0.51, 0.96849, 1.38016251};
  for (int step = 0; step < 3; ++step) {
    ASSERT_EQ(metart_sgd_update(context, pt.get(), gt.get(), bt.get(), 0.1, 0.9,
                                0.01, nullptr),
              METART_OK);
    EXPECT_NEAR(p[0], expected[step], 1e-15);
    EXPECT_NEAR(buf[0], buffers[step], 1e-15);
  }
}

TEST_F(Optimizers, PlainSgdNeedsNoBuffer) {
  std::vector<double> p = {1, -2}, g = {0.5, 0.25};
  Vector pt(p), gt(g);
  ASSERT_EQ(metart_sgd_update(context, pt.get(), gt.get(), nullptr, 0.1, 0, 0,
                              nullptr),
            METART_OK);
  EXPECT_DOUBLE_EQ(p[0], 0.95);
  EXPECT_DOUBLE_EQ(p[1], -2.025);
}

TEST_F(Optimizers, AdamWithAConstantGradientStepsByLr) {
  // With a constant gradient the bias-corrected moments are g and g^2, so
  // each step moves p by lr * g / (|g| + eps).
  std::vector<double> p = {1}, g = {0.5}, m = {0}, v = {0};
  Vector pt(p), gt(g), mt(m), vt(v);
  for (int step = 1; step <= 3; ++step) {
    ASSERT_EQ(metart_adam_update(context, pt.get(), gt.get(), mt.get(),
                                 vt.get(), StepCount(step).get(), 0.1, 0.9,
                                 0.999, 1e-8, 0, 0, nullptr),
              METART_OK);
    EXPECT_NEAR(p[0], 1 - step * 0.1 * 0.5 / (0.5 + 1e-8), 1e-14);
  }
  EXPECT_NEAR(m[0], 0.5 * (1 - std::pow(0.9, 3)), 1e-15);
  EXPECT_NEAR(v[0], 0.25 * (1 - std::pow(0.999, 3)), 1e-15);
}

TEST_F(Optimizers, AdamWShrinksBeforeTheStep) {
  // Decoupled decay: p <- p * (1 - lr * weight_decay), then the Adam step.
  std::vector<double> p = {1}, g = {0.5}, m = {0}, v = {0};
  Vector pt(p), gt(g), mt(m), vt(v);
  double expected = 1;
  for (int step = 1; step <= 3; ++step) {
    ASSERT_EQ(metart_adam_update(context, pt.get(), gt.get(), mt.get(),
                                 vt.get(), StepCount(step).get(), 0.1, 0.9,
                                 0.999, 1e-8, 0.1, 1, nullptr),
              METART_OK);
    expected = expected * (1 - 0.1 * 0.1) - 0.1 * 0.5 / (0.5 + 1e-8);
    EXPECT_NEAR(p[0], expected, 1e-14);
  }
}

/// The reference: torch.optim's update rules on doubles.
struct Reference {
  std::vector<double> p, m, v;

  void sgd(const std::vector<double> &g, double lr, double momentum,
           double decay) {
    for (size_t i = 0; i < p.size(); ++i) {
      double d = g[i] + decay * p[i];
      m[i] = momentum * m[i] + d;
      p[i] -= lr * m[i];
    }
  }

  void adam(const std::vector<double> &g, int step, double lr, double beta1,
            double beta2, double eps, double decay, bool decoupled) {
    for (size_t i = 0; i < p.size(); ++i) {
      double d = g[i];
      if (decoupled)
        p[i] *= 1 - lr * decay;
      else
        d += decay * p[i];
      m[i] = beta1 * m[i] + (1 - beta1) * d;
      v[i] = beta2 * v[i] + (1 - beta2) * d * d;
      double mHat = m[i] / (1 - std::pow(beta1, step));
      double vHat = v[i] / (1 - std::pow(beta2, step));
      p[i] -= lr * mHat / (std::sqrt(vHat) + eps);
    }
  }
};

/// The gradient of step `step`: different per element and per step.
std::vector<double> gradientAt(int step, size_t n) {
  std::vector<double> g(n);
  for (size_t i = 0; i < n; ++i)
    g[i] = std::sin(1.3 * static_cast<double>(i) + 0.7 * step) *
           (1 + static_cast<double>(i % 3));
  return g;
}

/// `values` converted to element type `To`.
template <typename To, typename From>
std::vector<To> cast(const std::vector<From> &values) {
  return std::vector<To>(values.begin(), values.end());
}

/// Runs three steps of the optimizer `kind` (0 SGD, 1 Adam, 2 AdamW) in
/// element type T and compares with the reference.
template <typename T>
void checkAgainstReference(metart_context *context, int kind,
                           double tolerance) {
  const size_t n = 7;
  Reference ref;
  for (size_t i = 0; i < n; ++i)
    ref.p.push_back(0.25 * static_cast<double>(i) - 0.8);
  ref.m.assign(n, 0);
  ref.v.assign(n, 0);
  std::vector<T> p = cast<T>(ref.p), m(n, T(0)), v(n, T(0));
  ref.p = cast<double>(p);
  for (int step = 1; step <= 3; ++step) {
    std::vector<T> g = cast<T>(gradientAt(step, n));
    std::vector<double> gd = cast<double>(g);
    Vector pt(p), gt(g), mt(m), vt(v);
    if (kind == 0) {
      ASSERT_EQ(metart_sgd_update(context, pt.get(), gt.get(), mt.get(), 0.05,
                                  0.9, 0.01, nullptr),
                METART_OK);
      ref.sgd(gd, 0.05, 0.9, 0.01);
    } else {
      ASSERT_EQ(metart_adam_update(context, pt.get(), gt.get(), mt.get(),
                                   vt.get(), StepCount(step).get(), 0.01, 0.9,
                                   0.99, 1e-8, 0.05, kind == 2, nullptr),
                METART_OK);
      ref.adam(gd, step, 0.01, 0.9, 0.99, 1e-8, 0.05, kind == 2);
    }
    // Errors relative to the largest magnitude: an element near zero
    // keeps the absolute error of the others.
    double pScale = 0, mScale = 0;
    for (size_t i = 0; i < n; ++i) {
      pScale = std::max(pScale, std::abs(ref.p[i]));
      mScale = std::max(mScale, std::abs(ref.m[i]));
    }
    for (size_t i = 0; i < n; ++i) {
      EXPECT_NEAR(p[i], ref.p[i], tolerance * pScale)
          << "step " << step << ", element " << i;
      EXPECT_NEAR(m[i], ref.m[i], tolerance * mScale)
          << "step " << step << ", element " << i;
    }
  }
}

TEST_F(Optimizers, SgdMatchesTheReference) {
  checkAgainstReference<double>(context, 0, 1e-14);
  checkAgainstReference<float>(context, 0, 1e-6);
}

TEST_F(Optimizers, AdamMatchesTheReference) {
  checkAgainstReference<double>(context, 1, 1e-13);
  checkAgainstReference<float>(context, 1, 1e-5);
}

TEST_F(Optimizers, AdamWMatchesTheReference) {
  checkAgainstReference<double>(context, 2, 1e-13);
  checkAgainstReference<float>(context, 2, 1e-5);
}

} // namespace
