//===- UpdateGuardTest.cpp - the non-finite check and clipping ------------===//
//
// metart_update_guard against sums written out here: squared norms per
// gradient, the gate's verdict for finite, NaN, infinite and overflowing
// gradients and losses, torch.nn.utils.clip_grad_norm_'s coefficient; and
// the gated updates: a closed gate changes nothing (the step count
// included), an open one scales the gradient.
//
//===----------------------------------------------------------------------===//

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace {

class UpdateGuard : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(metart_context_create(nullptr, &context), METART_OK);
  }
  void TearDown() override { metart_context_destroy(context); }

  /// Runs the guard on `grads` (f32 vectors) and a loss; fills norms, gate.
  metart_status guard(std::vector<std::vector<float>> &grads, float lossValue,
                      double clip) {
    shapes.assign(grads.size(), 0);
    views.assign(grads.size(), metart_tensor{});
    pointers.clear();
    for (size_t i = 0; i < grads.size(); ++i) {
      shapes[i] = static_cast<int64_t>(grads[i].size());
      views[i] = {grads[i].data(), METART_F32, 1, &shapes[i]};
      pointers.push_back(&views[i]);
    }
    loss = lossValue;
    norms.assign(grads.size(), -1);
    normsShape = static_cast<int64_t>(grads.size());
    metart_tensor lossView{&loss, METART_F32, 0, nullptr};
    metart_tensor normsView{norms.data(), METART_F64, 1, &normsShape};
    metart_tensor gateView{gate, METART_F64, 1, &two};
    return metart_update_guard(context, &lossView, pointers.data(),
                               static_cast<int64_t>(pointers.size()), clip,
                               &normsView, &gateView);
  }

  metart_context *context = nullptr;
  std::vector<int64_t> shapes;
  std::vector<metart_tensor> views;
  std::vector<const metart_tensor *> pointers;
  float loss = 0;
  std::vector<double> norms;
  int64_t normsShape = 0, two = 2;
  double gate[2] = {-1, -1};
};

TEST_F(UpdateGuard, SquaredNormsAndAnOpenGate) {
  std::vector<std::vector<float>> grads = {{3, 4}, {1, 2, 2}};
  ASSERT_EQ(guard(grads, 0.5f, 0), METART_OK);
  EXPECT_EQ(norms[0], 25);
  EXPECT_EQ(norms[1], 9);
  EXPECT_EQ(gate[0], 1);
  EXPECT_EQ(gate[1], 1);
}

TEST_F(UpdateGuard, ClipsAsPyTorchClipGradNorm) {
  // Global norm sqrt(25 + 9 + 2) = 6; max_norm 3 gives 3 / (6 + 1e-6).
  std::vector<std::vector<float>> grads = {{3, 4}, {1, 2, 2}, {1, 1}};
  ASSERT_EQ(guard(grads, 0.5f, 3.0), METART_OK);
  EXPECT_DOUBLE_EQ(gate[1], 3.0 / (6.0 + 1e-6));
  // A norm below the limit is not scaled up.
  ASSERT_EQ(guard(grads, 0.5f, 10.0), METART_OK);
  EXPECT_EQ(gate[1], 1);
}

TEST_F(UpdateGuard, NonFiniteValuesCloseTheGate) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  std::vector<std::vector<float>> grads = {{1, 2}, {3, nan}};
  ASSERT_EQ(guard(grads, 0.5f, 0), METART_OK);
  EXPECT_EQ(norms[0], 5);
  EXPECT_TRUE(std::isnan(norms[1]));
  EXPECT_EQ(gate[0], 0);
  grads = {{1, -inf}, {3, 4}};
  ASSERT_EQ(guard(grads, 0.5f, 0), METART_OK);
  EXPECT_TRUE(std::isinf(norms[0]));
  EXPECT_EQ(norms[1], 25);
  EXPECT_EQ(gate[0], 0);
  // Finite gradients, a non-finite meta-loss.
  grads = {{1, 2}};
  ASSERT_EQ(guard(grads, nan, 0), METART_OK);
  EXPECT_EQ(gate[0], 0);
  ASSERT_EQ(guard(grads, inf, 0), METART_OK);
  EXPECT_EQ(gate[0], 0);
}

TEST_F(UpdateGuard, ASquaredNormPastTheElementTypeIsInfinite) {
  // Each element is finite in f32, but the squared norm (2e38 * 2) is past
  // FLT_MAX: PyTorch's f32 norm of it is inf.
  std::vector<std::vector<float>> grads = {{1.5e19f, 1.5e19f}, {1}};
  ASSERT_EQ(guard(grads, 0.5f, 0), METART_OK);
  EXPECT_TRUE(std::isinf(norms[0]));
  EXPECT_EQ(norms[1], 1);
  EXPECT_EQ(gate[0], 0);
  grads = {{1e19f, 1e19f}};
  ASSERT_EQ(guard(grads, 0.5f, 0), METART_OK);
  EXPECT_DOUBLE_EQ(norms[0], 2 * double(1e19f) * double(1e19f));
  EXPECT_EQ(gate[0], 1);
}

TEST_F(UpdateGuard, RejectsBadArguments) {
  std::vector<std::vector<float>> grads = {{1, 2}};
  EXPECT_EQ(guard(grads, 0.5f, -1), METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(context)).find("clip_norm"),
            std::string::npos);
  float lossValue = 0;
  double wrong[3];
  int64_t three = 3, size = 2;
  metart_tensor lossView{&lossValue, METART_F32, 0, nullptr};
  metart_tensor grad{grads[0].data(), METART_F32, 1, &size};
  const metart_tensor *list[] = {&grad};
  metart_tensor badNorms{wrong, METART_F64, 1, &three};
  metart_tensor gateView{gate, METART_F64, 1, &two};
  EXPECT_EQ(
      metart_update_guard(context, &lossView, list, 1, 0, &badNorms, &gateView),
      METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(context)).find("norms"),
            std::string::npos);
}

TEST_F(UpdateGuard, AClosedGateChangesNothing) {
  std::vector<double> p = {1, 2}, g = {0.5, -0.5}, m = {0.1, 0.2},
                      v = {0.3, 0.4};
  int64_t size = 2, step = 7;
  metart_tensor pt{p.data(), METART_F64, 1, &size},
      gt{g.data(), METART_F64, 1, &size}, mt{m.data(), METART_F64, 1, &size},
      vt{v.data(), METART_F64, 1, &size}, st{&step, METART_I64, 0, nullptr};
  double closed[2] = {0, 1};
  metart_tensor gateView{closed, METART_F64, 1, &two};
  ASSERT_EQ(metart_increment(context, &st, &gateView), METART_OK);
  ASSERT_EQ(metart_adam_update(context, &pt, &gt, &mt, &vt, &st, 0.1, 0.9,
                               0.999, 1e-8, 0.01, 0, &gateView),
            METART_OK);
  ASSERT_EQ(
      metart_sgd_update(context, &pt, &gt, &mt, 0.1, 0.9, 0.01, &gateView),
      METART_OK);
  EXPECT_EQ(step, 7);
  EXPECT_EQ(p, (std::vector<double>{1, 2}));
  EXPECT_EQ(m, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(v, (std::vector<double>{0.3, 0.4}));
}

TEST_F(UpdateGuard, AnOpenGateScalesTheGradient) {
  // SGD with weight decay: p -= lr * (scale * g + decay * p).
  std::vector<double> p = {1, 2}, g = {0.5, -0.5};
  int64_t size = 2;
  metart_tensor pt{p.data(), METART_F64, 1, &size},
      gt{g.data(), METART_F64, 1, &size};
  double open[2] = {1, 0.25};
  metart_tensor gateView{open, METART_F64, 1, &two};
  ASSERT_EQ(
      metart_sgd_update(context, &pt, &gt, nullptr, 0.1, 0, 0.01, &gateView),
      METART_OK);
  EXPECT_DOUBLE_EQ(p[0], 1 - 0.1 * (0.25 * 0.5 + 0.01 * 1));
  EXPECT_DOUBLE_EQ(p[1], 2 - 0.1 * (0.25 * -0.5 + 0.01 * 2));
  // Adam's first step moves by lr whatever the scale: compare with the
  // unscaled gradient scaled by hand instead.
  std::vector<double> a = {1}, b = {1}, ga = {0.8}, gb = {0.2}, ma = {0},
                      mb = {0}, va = {0}, vb = {0};
  int64_t one = 1, step = 1;
  metart_tensor at{a.data(), METART_F64, 1, &one},
      bt{b.data(), METART_F64, 1, &one}, gat{ga.data(), METART_F64, 1, &one},
      gbt{gb.data(), METART_F64, 1, &one}, mat{ma.data(), METART_F64, 1, &one},
      mbt{mb.data(), METART_F64, 1, &one}, vat{va.data(), METART_F64, 1, &one},
      vbt{vb.data(), METART_F64, 1, &one}, st{&step, METART_I64, 0, nullptr};
  ASSERT_EQ(metart_adam_update(context, &at, &gat, &mat, &vat, &st, 0.1, 0.9,
                               0.999, 1e-8, 0.5, 0, &gateView),
            METART_OK);
  ASSERT_EQ(metart_adam_update(context, &bt, &gbt, &mbt, &vbt, &st, 0.1, 0.9,
                               0.999, 1e-8, 0.5, 0, nullptr),
            METART_OK);
  EXPECT_DOUBLE_EQ(a[0], b[0]);
  EXPECT_DOUBLE_EQ(ma[0], mb[0]);
}

} // namespace
