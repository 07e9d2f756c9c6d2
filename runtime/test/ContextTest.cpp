//===- ContextTest.cpp - contexts, backends, errors, the version ----------===//

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(Context, VersionIsSemantic) {
  std::string version = metart_version();
  EXPECT_EQ(std::count(version.begin(), version.end(), '.'), 2) << version;
}

#ifndef METART_HAVE_CUDA
TEST(Context, OnlyTheCpuBackendIsAvailable) {
  EXPECT_EQ(metart_backend_available(METART_BACKEND_CPU), 1);
  EXPECT_EQ(metart_backend_available(METART_BACKEND_CUDA), 0);
  EXPECT_EQ(metart_backend_available(static_cast<metart_backend>(7)), 0);
}
#else
TEST(Context, TheCpuBackendIsAvailableAndCudaWhenADeviceIs) {
  EXPECT_EQ(metart_backend_available(METART_BACKEND_CPU), 1);
  // With a device the CUDA backend's own tests run (metart-cuda-tests).
  int cuda = metart_backend_available(METART_BACKEND_CUDA);
  EXPECT_TRUE(cuda == 0 || cuda == 1) << cuda;
  EXPECT_EQ(metart_backend_available(static_cast<metart_backend>(7)), 0);
}
#endif

TEST(Context, CreatesAndDestroysACpuContext) {
  metart_context_options options = {METART_BACKEND_CPU, 0, 0};
  metart_context *context = nullptr;
  ASSERT_EQ(metart_context_create(&options, &context), METART_OK);
  ASSERT_NE(context, nullptr);
  EXPECT_STREQ(metart_context_last_error(context), "");
  EXPECT_EQ(metart_synchronize(context), METART_OK);
  metart_context_destroy(context);
}

TEST(Context, NullOptionsMeanTheCpu) {
  metart_context *context = nullptr;
  ASSERT_EQ(metart_context_create(nullptr, &context), METART_OK);
  metart_context_destroy(context);
}

#ifndef METART_HAVE_CUDA
TEST(Context, CudaIsUnsupportedWithAMessage) {
  metart_context_options options = {METART_BACKEND_CUDA, 0, 0};
  metart_context *context = reinterpret_cast<metart_context *>(1);
  EXPECT_EQ(metart_context_create(&options, &context),
            METART_ERROR_UNSUPPORTED);
  EXPECT_EQ(context, nullptr);
  EXPECT_STREQ(metart_context_last_error(nullptr),
               "metart_context_create: the CUDA backend is not part of this "
               "build (only METART_BACKEND_CPU is available)");
}
#else
TEST(Context, CudaWithoutADeviceIsUnsupportedWithAMessage) {
  if (metart_backend_available(METART_BACKEND_CUDA))
    GTEST_SKIP() << "a CUDA device is present";
  metart_context_options options = {METART_BACKEND_CUDA, 0, 0};
  metart_context *context = reinterpret_cast<metart_context *>(1);
  EXPECT_EQ(metart_context_create(&options, &context),
            METART_ERROR_UNSUPPORTED);
  EXPECT_EQ(context, nullptr);
  std::string message = metart_context_last_error(nullptr);
  EXPECT_EQ(message.rfind("metart_context_create: no CUDA device is "
                          "available (",
                          0),
            0u)
      << message;
}
#endif

TEST(Context, RejectsUnknownBackendsAndNullOutputs) {
  metart_context_options options = {static_cast<metart_backend>(9), 0, 0};
  metart_context *context = nullptr;
  EXPECT_EQ(metart_context_create(&options, &context),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_context_last_error(nullptr),
               "metart_context_create: unknown backend 9");
  EXPECT_EQ(metart_context_create(nullptr, nullptr),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_context_last_error(nullptr),
               "metart_context_create: out_context is null");
}

TEST(Context, CallsWithoutAContextFailWithAMessage) {
  int64_t shape[] = {2};
  float data[2] = {};
  metart_tensor y = {data, METART_F32, 1, shape};
  EXPECT_EQ(metart_fill(nullptr, &y, 1.0), METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_context_last_error(nullptr),
               "metart_fill: the context is null");
  void *out = nullptr;
  EXPECT_EQ(metart_buffer_alloc(nullptr, 8, &out),
            METART_ERROR_INVALID_ARGUMENT);
  metart_scratch_reset(nullptr);
  metart_buffer_free(nullptr, out);
  metart_context_destroy(nullptr);
}

TEST(Context, ErrorsStayUntilTheNextError) {
  metart_context *context = nullptr;
  ASSERT_EQ(metart_context_create(nullptr, &context), METART_OK);
  int64_t shape[] = {2};
  float data[2] = {};
  metart_tensor y = {data, METART_F32, 1, shape};
  EXPECT_EQ(metart_nn_softmax(context, &y, 1, &y),
            METART_ERROR_INVALID_ARGUMENT);
  std::string first = metart_context_last_error(context);
  EXPECT_EQ(first, "metart_nn_softmax: axis 1 is out of range for x [2] f32");
  EXPECT_EQ(metart_fill(context, &y, 2.0), METART_OK);
  EXPECT_EQ(metart_context_last_error(context), first);
  EXPECT_EQ(data[1], 2.0f);
  metart_context_destroy(context);
}

} // namespace
