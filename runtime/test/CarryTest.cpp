//===- CarryTest.cpp - values a step keeps for its next call --------------===//

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

class Carry : public ::testing::Test {
protected:
  void SetUp() override {
    metart_context_options options = {METART_BACKEND_CPU, 0, 0};
    ASSERT_EQ(metart_context_create(&options, &context), METART_OK);
  }
  void TearDown() override { metart_context_destroy(context); }

  metart_tensor tensor(std::vector<double> &values) {
    shape = static_cast<int64_t>(values.size());
    return {values.data(), METART_F64, 1, &shape};
  }

  metart_context *context = nullptr;
  int64_t shape = 0;
};

TEST_F(Carry, LoadReturnsThePreviousCallsStoreInEitherOrder) {
  std::vector<double> in(3), out(3, 7.0);
  metart_tensor x = tensor(in);
  metart_tensor y = tensor(out);
  // Call 0: nothing stored before, so zeros, whether the load comes first
  // (site 0) or after this call's store (site 1).
  in = {1, 2, 3};
  ASSERT_EQ(metart_carry_load(context, &y, 0, 2), METART_OK);
  EXPECT_EQ(out, std::vector<double>({0, 0, 0}));
  ASSERT_EQ(metart_carry_store(context, &x, 0, 2), METART_OK);
  ASSERT_EQ(metart_carry_store(context, &x, 1, 2), METART_OK);
  out.assign(3, 7.0);
  ASSERT_EQ(metart_carry_load(context, &y, 1, 2), METART_OK);
  EXPECT_EQ(out, std::vector<double>({0, 0, 0}));
  // Calls 1 and 2: what call 0 and call 1 stored.
  for (double call : {1.0, 2.0}) {
    std::vector<double> before = in;
    in = {10 * call, 20 * call, 30 * call};
    ASSERT_EQ(metart_carry_load(context, &y, 0, 2), METART_OK);
    EXPECT_EQ(out, before);
    ASSERT_EQ(metart_carry_store(context, &x, 0, 2), METART_OK);
    ASSERT_EQ(metart_carry_store(context, &x, 1, 2), METART_OK);
    out.assign(3, 7.0);
    ASSERT_EQ(metart_carry_load(context, &y, 1, 2), METART_OK);
    EXPECT_EQ(out, before) << "call " << call;
  }
  // The stored value is a copy: changing the input later changes nothing.
  std::vector<double> stored = in;
  in = {-1, -1, -1};
  ASSERT_EQ(metart_carry_load(context, &y, 0, 2), METART_OK);
  EXPECT_EQ(out, stored);
}

TEST_F(Carry, ViewPointsAtThePreviousCallsStoreWithoutCopying) {
  std::vector<double> in = {1, 2};
  metart_tensor x = tensor(in);
  metart_tensor y = x;
  y.data = nullptr;
  // Call 0: zeros, in a buffer the store of this call does not write.
  ASSERT_EQ(metart_carry_view(context, &y, 5, 2), METART_OK);
  ASSERT_NE(y.data, nullptr);
  ASSERT_EQ(metart_carry_store(context, &x, 5, 2), METART_OK);
  const double *first = static_cast<const double *>(y.data);
  EXPECT_EQ(std::vector<double>(first, first + 2), std::vector<double>({0, 0}));
  // Call 1: what call 0 stored, unchanged by this call's store.
  in = {3, 4};
  ASSERT_EQ(metart_carry_store(context, &x, 5, 2), METART_OK);
  y.data = nullptr;
  ASSERT_EQ(metart_carry_view(context, &y, 5, 2), METART_OK);
  const double *second = static_cast<const double *>(y.data);
  EXPECT_EQ(std::vector<double>(second, second + 2),
            std::vector<double>({1, 2}));
  EXPECT_NE(second, in.data());
}

// One buffer: the view and its reads come before the call's store, which
// then overwrites the buffer for the next call.
TEST_F(Carry, OneBufferServesAViewReadBeforeTheStore) {
  std::vector<double> in = {1, 2};
  metart_tensor x = tensor(in);
  metart_tensor y = x;
  std::vector<const double *> seen;
  for (double call : {0.0, 1.0, 2.0}) {
    y.data = nullptr;
    ASSERT_EQ(metart_carry_view(context, &y, 6, 1), METART_OK);
    const double *view = static_cast<const double *>(y.data);
    seen.push_back(view);
    std::vector<double> expected = {0, 0};
    if (call > 0)
      expected = {10 * (call - 1) + 1, 10 * (call - 1) + 2};
    EXPECT_EQ(std::vector<double>(view, view + 2), expected) << "call " << call;
    in = {10 * call + 1, 10 * call + 2};
    ASSERT_EQ(metart_carry_store(context, &x, 6, 1), METART_OK);
  }
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[1], seen[2]);
  // The count is the site's: another is an error, as is 3.
  EXPECT_EQ(metart_carry_store(context, &x, 6, 2),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(metart_context_last_error(context)),
            "metart_carry_store: site 6 was first used with 1 buffer, not 2");
  EXPECT_EQ(metart_carry_store(context, &x, 7, 3),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(metart_context_last_error(context)),
            "metart_carry_store: a site has 1 or 2 buffers, not 3");
}

TEST_F(Carry, ResetForgetsWhatWasStored) {
  std::vector<double> in = {4, 5}, out(2, 7.0);
  metart_tensor x = tensor(in);
  metart_tensor y = tensor(out);
  ASSERT_EQ(metart_carry_store(context, &x, 3, 2), METART_OK);
  metart_carry_reset(context);
  ASSERT_EQ(metart_carry_load(context, &y, 3, 2), METART_OK);
  EXPECT_EQ(out, std::vector<double>({0, 0}));
}

TEST_F(Carry, RejectsAnotherSizeOrTypeAndBadSites) {
  std::vector<double> in = {1, 2}, longer = {1, 2, 3};
  metart_tensor x = tensor(in);
  ASSERT_EQ(metart_carry_store(context, &x, 0, 2), METART_OK);
  metart_tensor y = tensor(longer);
  EXPECT_EQ(metart_carry_load(context, &y, 0, 2),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(metart_context_last_error(context)),
            "metart_carry_load: site 0 holds 16 bytes of f64, not 24 bytes "
            "of f64");
  std::vector<float> single = {1, 2};
  int64_t two = 2;
  metart_tensor f = {single.data(), METART_F32, 1, &two};
  EXPECT_EQ(metart_carry_store(context, &f, 0, 2),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(metart_context_last_error(context)),
            "metart_carry_store: site 0 holds 16 bytes of f64, not 8 bytes "
            "of f32");
  EXPECT_EQ(metart_carry_store(context, &x, -1, 2),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(metart_context_last_error(context)),
            "metart_carry_store: site -1 is negative");
  EXPECT_EQ(metart_carry_load(context, nullptr, 0, 2),
            METART_ERROR_INVALID_ARGUMENT);
}

} // namespace
