//===- ProfileTest.cpp - the runtime's per-function time profile ----------===//

#include "Profile.h"
#include "Context.h"
#include "metart/metart.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(Profile, SumsCallsPerFunctionMostTimeFirst) {
  metart::KernelProfile profile;
  static const char *const kConv = "metart_nn_conv2d";
  static const char *const kAdd = "metart_nn_binary";
  profile.add(kAdd, 0.001);
  profile.add(kConv, 0.004);
  profile.add(kAdd, 0.002);
  std::vector<metart::KernelProfile::Entry> entries = profile.entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].function, kConv);
  EXPECT_EQ(entries[0].calls, 1);
  EXPECT_DOUBLE_EQ(entries[0].seconds, 0.004);
  EXPECT_EQ(entries[1].function, kAdd);
  EXPECT_EQ(entries[1].calls, 2);
  EXPECT_DOUBLE_EQ(entries[1].seconds, 0.003);
  EXPECT_DOUBLE_EQ(profile.totalSeconds(), 0.007);
  EXPECT_EQ(metart::profileJson(profile),
            "[{\"function\": \"metart_nn_conv2d\", \"calls\": 1, \"seconds\": "
            "0.004}, {\"function\": \"metart_nn_binary\", \"calls\": 2, "
            "\"seconds\": 0.003}]");
}

TEST(Profile, FormatsSharesPerIterationAndTheRest) {
  metart::KernelProfile profile;
  profile.add("a", 0.003);
  profile.add("b", 0.002);
  profile.add("c", 0.001);
  profile.setSpan(2, 0.010);
  std::string text = metart::formatProfile(profile, /*top=*/1);
  EXPECT_NE(text.find("runtime profile of 2 meta-iterations: 6.0 ms in 3 "
                      "calls (60.0% of the iterations' 10.0 ms)"),
            std::string::npos)
      << text;
  // a: 3 ms in all, 1.5 ms per iteration, 30% of the span.
  EXPECT_NE(text.find("  a "), std::string::npos) << text;
  EXPECT_NE(text.find("3.00          1.500   30.0%"), std::string::npos)
      << text;
  // b and c summed in one line.
  EXPECT_NE(text.find("(2 others)"), std::string::npos) << text;
  EXPECT_NE(text.find("3.00          1.500   30.0%\n  (2 others)"),
            std::string::npos)
      << text;
}

TEST(Profile, AContextRecordsItsCallsOnlyWhileEnabled) {
  // The trainer turns profiling on for the timed iterations only.
  metart_context *context = nullptr;
  ASSERT_EQ(metart_context_create(nullptr, &context), METART_OK);
  std::vector<double> values(1000);
  int64_t size = static_cast<int64_t>(values.size());
  metart_tensor y{values.data(), METART_F64, 1, &size};
  ASSERT_EQ(metart_fill(context, &y, 1.0), METART_OK);
  context->profile.enable(true);
  ASSERT_EQ(metart_fill(context, &y, 2.0), METART_OK);
  ASSERT_EQ(metart_fill(context, &y, 3.0), METART_OK);
  // A failing call is not timed.
  metart_tensor bad{nullptr, METART_F64, 1, &size};
  EXPECT_NE(metart_fill(context, &bad, 4.0), METART_OK);
  context->profile.enable(false);
  ASSERT_EQ(metart_fill(context, &y, 5.0), METART_OK);
  std::vector<metart::KernelProfile::Entry> entries =
      context->profile.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].function, "metart_fill");
  EXPECT_EQ(entries[0].calls, 2);
  EXPECT_GT(entries[0].seconds, 0.0);
  EXPECT_EQ(values[0], 5.0);
  metart_context_destroy(context);
}

} // namespace
