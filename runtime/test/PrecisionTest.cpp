//===- PrecisionTest.cpp - bf16 and f16 storage, computed in f32 ----------===//
//
// The conversions against values worked out by hand and against their
// definition (the nearest of the two neighbours, ties to the even one,
// over a sweep of f32 values; every 16-bit pattern back and forth), then
// kernels on bf16 and f16 operands against the f32 kernels on the same
// (widened) values, rounded: they must agree bit for bit. A dot product
// that bf16 accumulation would get wrong checks that sums run in f32.
//
//===----------------------------------------------------------------------===//

#include "Precision.h"

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace metart;

namespace {

TEST(Precision, Bf16ByHand) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBf16(-2.0f), 0xc000);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to the even 1.
  EXPECT_EQ(floatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to the even
  // 1 + 2^-6.
  EXPECT_EQ(floatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(floatToBf16(INFINITY), 0x7f80);
  EXPECT_EQ(floatToBf16(3.4e38f), 0x7f80); // above the largest bf16
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
  EXPECT_EQ(bf16ToFloat(0x4049), 3.140625f);
}

TEST(Precision, F16ByHand) {
  EXPECT_EQ(floatToF16(1.0f), 0x3c00);
  EXPECT_EQ(floatToF16(-2.0f), 0xc000);
  EXPECT_EQ(floatToF16(65504.0f), 0x7bff); // the largest
  EXPECT_EQ(floatToF16(65519.0f), 0x7bff); // below the halfway point
  EXPECT_EQ(floatToF16(65520.0f), 0x7c00); // halfway: to infinity
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -24)), 0x0001); // the smallest
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -25)), 0x0000); // a tie, to even 0
  EXPECT_EQ(floatToF16(3 * std::ldexp(1.0f, -26)), 0x0001);
  EXPECT_EQ(floatToF16(std::ldexp(1.0f, -14)), 0x0400); // the smallest normal
  EXPECT_EQ(floatToF16(1.0f / 3), 0x3555);
  EXPECT_EQ(f16ToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(f16ToFloat(0x7c00), INFINITY);
  EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(NAN))));
}

TEST(Precision, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = uint16_t(bits);
    float f = f16ToFloat(h), b = bf16ToFloat(h);
    if (!std::isnan(f))
      EXPECT_EQ(floatToF16(f), h) << "f16 " << bits;
    if (!std::isnan(b))
      EXPECT_EQ(floatToBf16(b), h) << "bf16 " << bits;
  }
}

/// `to` rounds `x` to the nearer of the two representable neighbours
/// (the even one on a tie), found by walking the 16-bit patterns.
template <typename To, typename From>
void expectNearest(float x, To to, From from, const char *what) {
  uint16_t r = to(x);
  double value = from(r);
  if (std::isinf(value))
    return; // overflow has its own cases above
  // The neighbours of r (same sign: patterns are sign-magnitude).
  for (int step : {-1, 1}) {
    uint16_t n = uint16_t(r + step);
    if ((n & 0x7fff) == 0x7fff || ((n ^ r) & 0x8000))
      continue;
    double other = from(n);
    if (std::isnan(other) || std::isinf(other))
      continue;
    double mine = std::fabs(value - x), theirs = std::fabs(other - x);
    EXPECT_TRUE(mine < theirs || (mine == theirs && (r & 1) == 0))
        << what << " of " << x << " gave " << value << ", " << other
        << " is nearer";
  }
}

TEST(Precision, RoundsToNearestEven) {
  std::mt19937 random(7);
  std::uniform_real_distribution<float> unit(-1, 1);
  for (int i = 0; i < 200000; ++i) {
    float x = unit(random) * std::ldexp(1.0f, int(random() % 40) - 26);
    expectNearest(x, floatToBf16, bf16ToFloat, "bf16");
    expectNearest(x, floatToF16, f16ToFloat, "f16");
  }
}

/// A tensor of `dtype` on the host (the CPU backend's memory).
class Tensor {
public:
  Tensor(std::vector<int64_t> shape, metart_dtype dtype)
      : shape(std::move(shape)) {
    int64_t n = 1;
    for (int64_t d : this->shape)
      n *= d;
    bytes.assign(size_t(n) * (dtype == METART_F32 ? 4 : 2), 0);
    view = {bytes.data(), dtype, int32_t(this->shape.size()),
            this->shape.data()};
  }
  int64_t count() const {
    return int64_t(bytes.size()) / (view.dtype == METART_F32 ? 4 : 2);
  }
  float get(int64_t i) const {
    uint16_t h;
    float f;
    switch (view.dtype) {
    case METART_F32:
      std::memcpy(&f, &bytes[size_t(i) * 4], 4);
      return f;
    case METART_BF16:
      std::memcpy(&h, &bytes[size_t(i) * 2], 2);
      return bf16ToFloat(h);
    default:
      std::memcpy(&h, &bytes[size_t(i) * 2], 2);
      return f16ToFloat(h);
    }
  }
  void set(int64_t i, float value) {
    uint16_t h;
    switch (view.dtype) {
    case METART_F32:
      std::memcpy(&bytes[size_t(i) * 4], &value, 4);
      return;
    case METART_BF16:
      h = floatToBf16(value);
      break;
    default:
      h = floatToF16(value);
    }
    std::memcpy(&bytes[size_t(i) * 2], &h, 2);
  }
  const metart_tensor *get() const { return &view; }

private:
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  metart_tensor view;
};

class ReducedKernels : public ::testing::TestWithParam<metart_dtype> {
protected:
  void SetUp() override {
    ASSERT_EQ(metart_context_create(nullptr, &context), METART_OK);
  }
  void TearDown() override { metart_context_destroy(context); }

  /// The same values in the reduced type and, widened, in f32.
  void fill(Tensor &reduced, Tensor &wide, float scale) {
    std::uniform_real_distribution<float> unit(-scale, scale);
    for (int64_t i = 0; i < reduced.count(); ++i) {
      reduced.set(i, unit(random));
      wide.set(i, reduced.get(i));
    }
  }
  /// `reduced` is `wide` rounded, element for element.
  void expectRounded(const Tensor &reduced, const Tensor &wide) {
    Tensor rounded(std::vector<int64_t>{reduced.count()}, GetParam());
    for (int64_t i = 0; i < reduced.count(); ++i) {
      rounded.set(i, wide.get(i));
      ASSERT_EQ(reduced.get(i), rounded.get(i)) << "element " << i;
    }
  }

  metart_context *context = nullptr;
  std::mt19937 random{11};
};

TEST_P(ReducedKernels, LinearIsF32Rounded) {
  metart_dtype t = GetParam();
  Tensor x({4, 6, 32}, t), w({16, 32}, t), b({16}, t), y({4, 6, 16}, t);
  Tensor xf({4, 6, 32}, METART_F32), wf({16, 32}, METART_F32),
      bf({16}, METART_F32), yf({4, 6, 16}, METART_F32);
  fill(x, xf, 2);
  fill(w, wf, 0.5);
  fill(b, bf, 1);
  ASSERT_EQ(metart_nn_linear(context, x.get(), w.get(), b.get(), y.get()),
            METART_OK)
      << metart_context_last_error(context);
  ASSERT_EQ(metart_nn_linear(context, xf.get(), wf.get(), bf.get(), yf.get()),
            METART_OK);
  expectRounded(y, yf);
}

TEST_P(ReducedKernels, ElementwiseInPlaceSoftmaxReduceAndLoss) {
  metart_dtype t = GetParam();
  Tensor a({3, 50}, t), b({3, 50}, t), s({3, 50}, t), r({3}, t), l({}, t);
  Tensor af({3, 50}, METART_F32), bf({3, 50}, METART_F32),
      sf({3, 50}, METART_F32), rf({3}, METART_F32), lf({}, METART_F32);
  fill(a, af, 3);
  fill(b, bf, 3);
  // a = a * b in place, then softmax, a sum over the last dim, MSE.
  ASSERT_EQ(metart_nn_binary(context, METART_MUL, a.get(), b.get(), a.get()),
            METART_OK);
  ASSERT_EQ(metart_nn_binary(context, METART_MUL, af.get(), bf.get(), af.get()),
            METART_OK);
  expectRounded(a, af);
  fill(a, af, 3); // the rounded values again on both sides
  ASSERT_EQ(metart_nn_softmax(context, a.get(), 1, s.get()), METART_OK);
  ASSERT_EQ(metart_nn_softmax(context, af.get(), 1, sf.get()), METART_OK);
  expectRounded(s, sf);
  int64_t dims[] = {1};
  ASSERT_EQ(metart_nn_reduce_sum(context, a.get(), dims, 1, r.get()),
            METART_OK);
  ASSERT_EQ(metart_nn_reduce_sum(context, af.get(), dims, 1, rf.get()),
            METART_OK);
  expectRounded(r, rf);
  ASSERT_EQ(metart_nn_mse_loss(context, a.get(), b.get(), 0, l.get()),
            METART_OK);
  for (int64_t i = 0; i < b.count(); ++i)
    bf.set(i, b.get(i));
  ASSERT_EQ(metart_nn_mse_loss(context, af.get(), bf.get(), 0, lf.get()),
            METART_OK);
  expectRounded(l, lf);
}

TEST_P(ReducedKernels, SumsAccumulateInF32) {
  // 1 + 1023 terms of 2^-9: each is below half an ulp of 1 in bf16 (2^-8),
  // so a bf16 accumulator would stay at 1; in f32 the sum is 2.998..., 3 in
  // bf16 (2.998046875 in f16).
  metart_dtype t = GetParam();
  Tensor x({1, 1024}, t), w({1, 1024}, t), y({1, 1}, t);
  for (int64_t i = 0; i < 1024; ++i) {
    x.set(i, i == 0 ? 1.0f : std::ldexp(1.0f, -9));
    w.set(i, 1.0f);
  }
  ASSERT_EQ(metart_nn_linear(context, x.get(), w.get(), nullptr, y.get()),
            METART_OK);
  float expected = 1.0f + 1023 * std::ldexp(1.0f, -9);
  Tensor rounded({1}, t);
  rounded.set(0, expected);
  EXPECT_EQ(y.get(0), rounded.get(0));
  EXPECT_GT(y.get(0), 2.9f);
}

TEST_P(ReducedKernels, ConvertBothWays) {
  metart_dtype t = GetParam();
  Tensor f({5, 7}, METART_F32), h({5, 7}, t), back({5, 7}, METART_F32);
  std::uniform_real_distribution<float> unit(-100, 100);
  for (int64_t i = 0; i < f.count(); ++i)
    f.set(i, unit(random));
  ASSERT_EQ(metart_convert(context, f.get(), h.get()), METART_OK);
  ASSERT_EQ(metart_convert(context, h.get(), back.get()), METART_OK);
  for (int64_t i = 0; i < f.count(); ++i) {
    Tensor one({1}, t);
    one.set(0, f.get(i));
    EXPECT_EQ(back.get(i), one.get(0)) << "element " << i;
  }
  Tensor wrong({7, 5}, t);
  EXPECT_EQ(metart_convert(context, f.get(), wrong.get()),
            METART_ERROR_INVALID_ARGUMENT);
}

TEST_P(ReducedKernels, MasterWeightsOnly) {
  // The update guard reads the gradients of f32 master weights.
  metart_dtype t = GetParam();
  Tensor loss({}, METART_F32), grad({3}, t);
  std::vector<double> norms(1), gate(2);
  int64_t one = 1, two = 2;
  metart_tensor n{norms.data(), METART_F64, 1, &one},
      g{gate.data(), METART_F64, 1, &two};
  const metart_tensor *grads[] = {grad.get()};
  EXPECT_EQ(metart_update_guard(context, loss.get(), grads, 1, 0, &n, &g),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(context))
                .find("expects f32 or f64 gradients (of f32 master weights)"),
            std::string::npos)
      << metart_context_last_error(context);
  Tensor reducedLoss({}, t), f32Grad({3}, METART_F32);
  const metart_tensor *f32Grads[] = {f32Grad.get()};
  EXPECT_EQ(
      metart_update_guard(context, reducedLoss.get(), f32Grads, 1, 0, &n, &g),
      METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(context))
                .find("expects an f32 or f64 loss (the meta-loss of f32 "
                      "master weights)"),
            std::string::npos)
      << metart_context_last_error(context);
}

INSTANTIATE_TEST_SUITE_P(Types, ReducedKernels,
                         ::testing::Values(METART_BF16, METART_F16),
                         [](const auto &info) {
                           return std::string(
                               info.param == METART_BF16 ? "bf16" : "f16");
                         });

} // namespace
