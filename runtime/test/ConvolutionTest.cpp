//===- ConvolutionTest.cpp - oneDNN's convolutions against im2col ---------===//
//
// The f32 convolutions (oneDNN where it computes them) against the f64 ones
// (im2col + OpenBLAS, checked against the reference interpreter by
// metart.KernelsVsInterpreter) on the same values, in all three directions,
// on the example networks' shapes (tasks with their own weights, one input
// channel, 64 channels) and on strides, paddings and kernels that exercise
// the layout reorders and the end padding, with oneDNN forced and with the
// default choice (measured at a shape's first call, then kept: each shape is
// computed twice). Then the choice itself: which types and settings oneDNN
// takes, and that the default measures each shape and direction once.
//
//===----------------------------------------------------------------------===//

#include "cpu/OneDnn.h"

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>
#include <vector>

using namespace metart;

namespace {

struct Case {
  const char *name;
  int64_t slices, images, channels, height, width, outChannels, kernelH,
      kernelW, strideH, strideW, padH, padW;
  bool bias;
};

int64_t outputSize(int64_t size, int64_t kernel, int64_t stride, int64_t pad) {
  return (size + 2 * pad - kernel) / stride + 1;
}

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

/// A case and METART_CONVOLUTION's value: "onednn" (every f32 shape oneDNN
/// handles, not the kernel measured fastest, which may be im2col) or
/// "auto" (the measured choice, whichever kernel wins).
using CaseAndChoice = std::tuple<Case, const char *>;

class Convolutions : public ::testing::TestWithParam<CaseAndChoice> {
protected:
  void SetUp() override {
    ::setenv("METART_CONVOLUTION", std::get<1>(GetParam()), 1);
    metart_context_options options = {METART_BACKEND_CPU, 0, 0};
    ASSERT_EQ(metart_context_create(&options, &context), METART_OK);
    ::unsetenv("METART_CONVOLUTION");
  }
  void TearDown() override { metart_context_destroy(context); }

  /// A tensor of `values` with `shape` (slice dimension first).
  metart_tensor tensor(std::vector<float> &values,
                       const std::vector<int64_t> &shape) {
    return {values.data(), METART_F32, int32_t(shape.size()), shape.data()};
  }
  metart_tensor tensor(std::vector<double> &values,
                       const std::vector<int64_t> &shape) {
    return {values.data(), METART_F64, int32_t(shape.size()), shape.data()};
  }

  /// Expects `got` (f32) to match `want` (f64) to f32 rounding of sums of
  /// `terms` products of values in [-1, 1].
  static void expectClose(const std::vector<float> &got,
                          const std::vector<double> &want, int64_t terms,
                          const char *what) {
    ASSERT_EQ(got.size(), want.size());
    double tolerance = 4e-7 * std::sqrt(double(terms)) * 8 + 1e-6;
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], tolerance)
          << what << " element " << i << " of " << got.size();
  }

  metart_context *context = nullptr;
};

TEST_P(Convolutions, MatchTheF64Kernels) {
  const Case &c = std::get<0>(GetParam());
  int64_t outH = outputSize(c.height, c.kernelH, c.strideH, c.padH);
  int64_t outW = outputSize(c.width, c.kernelW, c.strideW, c.padW);
  std::vector<int64_t> xShape = {c.slices, c.images, c.channels, c.height,
                                 c.width};
  std::vector<int64_t> wShape = {c.slices, c.outChannels, c.channels, c.kernelH,
                                 c.kernelW};
  std::vector<int64_t> bShape = {c.slices, c.outChannels};
  std::vector<int64_t> yShape = {c.slices, c.images, c.outChannels, outH, outW};
  auto count = [](const std::vector<int64_t> &shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return size_t(n);
  };
  std::mt19937 random(7);
  Values x(count(xShape), random), w(count(wShape), random),
      b(count(bShape), random), g(count(yShape), random);
  int64_t stride[2] = {c.strideH, c.strideW}, padding[2] = {c.padH, c.padW};

  // The first pass measures (by default), the second takes the choice.
  for (int pass = 0; pass < 2; ++pass) {
    SCOPED_TRACE(pass == 0 ? "first call" : "second call");
    // Forward.
    std::vector<float> y32(count(yShape));
    std::vector<double> y64(count(yShape));
    metart_tensor x32t = tensor(x.f32, xShape), w32t = tensor(w.f32, wShape),
                  b32t = tensor(b.f32, bShape), y32t = tensor(y32, yShape);
    metart_tensor x64t = tensor(x.f64, xShape), w64t = tensor(w.f64, wShape),
                  b64t = tensor(b.f64, bShape), y64t = tensor(y64, yShape);
    ASSERT_EQ(metart_nn_conv2d(context, &x32t, &w32t, c.bias ? &b32t : nullptr,
                               stride, padding, &y32t),
              METART_OK)
        << metart_context_last_error(context);
    ASSERT_EQ(metart_nn_conv2d(context, &x64t, &w64t, c.bias ? &b64t : nullptr,
                               stride, padding, &y64t),
              METART_OK);
    expectClose(y32, y64, c.channels * c.kernelH * c.kernelW, "forward");

    // The input derivative.
    std::vector<float> dx32(count(xShape));
    std::vector<double> dx64(count(xShape));
    metart_tensor g32t = tensor(g.f32, yShape), dx32t = tensor(dx32, xShape);
    metart_tensor g64t = tensor(g.f64, yShape), dx64t = tensor(dx64, xShape);
    ASSERT_EQ(metart_nn_conv2d_backward_input(context, &g32t, &w32t, stride,
                                              padding, &dx32t),
              METART_OK)
        << metart_context_last_error(context);
    ASSERT_EQ(metart_nn_conv2d_backward_input(context, &g64t, &w64t, stride,
                                              padding, &dx64t),
              METART_OK);
    expectClose(dx32, dx64, c.outChannels * c.kernelH * c.kernelW,
                "backward input");

    // The weight derivative.
    std::vector<float> dw32(count(wShape));
    std::vector<double> dw64(count(wShape));
    metart_tensor dw32t = tensor(dw32, wShape), dw64t = tensor(dw64, wShape);
    ASSERT_EQ(metart_nn_conv2d_backward_weight(context, &x32t, &g32t, stride,
                                               padding, &dw32t),
              METART_OK)
        << metart_context_last_error(context);
    ASSERT_EQ(metart_nn_conv2d_backward_weight(context, &x64t, &g64t, stride,
                                               padding, &dw64t),
              METART_OK);
    expectClose(dw32, dw64, c.images * outH * outW, "backward weight");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Convolutions,
    ::testing::Combine(
        ::testing::Values(
            // The ConvNet MAML example: four tasks, each with its own weights.
            Case{"ConvNetTasks", 4, 5, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, true},
            // ProtoNets' first layer: one input channel, 64 outputs.
            Case{"OneChannel", 1, 20, 1, 28, 28, 64, 3, 3, 1, 1, 1, 1, true},
            Case{"SixtyFour", 1, 6, 64, 7, 7, 64, 3, 3, 1, 1, 1, 1, false},
            Case{"StrideTwo", 2, 3, 5, 9, 11, 7, 3, 2, 2, 2, 0, 1, true},
            // Windows that stop short of the padded end (negative end padding).
            Case{"SparseStride", 1, 2, 2, 9, 10, 3, 2, 2, 3, 4, 0, 1, true},
            Case{"Pointwise", 3, 2, 16, 5, 4, 24, 1, 1, 1, 1, 0, 0, false},
            Case{"WidePadding", 1, 2, 3, 6, 6, 4, 5, 5, 1, 1, 2, 2, true},
            Case{"Empty", 2, 0, 4, 5, 5, 4, 3, 3, 1, 1, 1, 1, true}),
        ::testing::Values("onednn", "auto")),
    [](const ::testing::TestParamInfo<CaseAndChoice> &info) {
      return std::string(std::get<0>(info.param).name) + "_" +
             std::get<1>(info.param);
    });

/// A 3x3 convolution of 64 channels on 14x14 images (ProtoNets' second
/// layer).
ConvSizes protoNetLayer() {
  ConvSizes s{};
  s.images = s.imagesPerSlice = 20;
  s.slices = 1;
  s.channels = s.outChannels = 64;
  s.height = s.width = s.outHeight = s.outWidth = 14;
  s.kernelH = s.kernelW = 3;
  s.strideH = s.strideW = s.padH = s.padW = 1;
  return s;
}

TEST(ConvolutionChoice, OneDnnTakesF32) {
#ifdef METART_HAVE_DNNL
  cpu::OneDnnConvolutions convolutions;
  EXPECT_TRUE(convolutions.handles(METART_F32, protoNetLayer()));
  EXPECT_FALSE(convolutions.handles(METART_F64, protoNetLayer()));
  std::string implementation = convolutions.implementation(protoNetLayer());
  EXPECT_FALSE(implementation.empty());
  EXPECT_NE(implementation.rfind("ref", 0), 0u) << implementation;
#else
  GTEST_SKIP() << "metart was built without oneDNN";
#endif
}

TEST(ConvolutionChoice, EnvironmentKeepsIm2col) {
  ::setenv("METART_CONVOLUTION", "im2col", 1);
  cpu::OneDnnConvolutions convolutions;
  ::unsetenv("METART_CONVOLUTION");
  EXPECT_FALSE(convolutions.handles(METART_F32, protoNetLayer()));
  EXPECT_EQ(convolutions.implementation(protoNetLayer()), "");
}

/// The lines of `text` that start with `prefix`.
std::vector<std::string> linesStartingWith(const std::string &text,
                                           const std::string &prefix) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos)
      end = text.size();
    std::string line = text.substr(begin, end - begin);
    if (line.rfind(prefix, 0) == 0)
      lines.push_back(line);
    begin = end + 1;
  }
  return lines;
}

// By default the CPU backend times oneDNN (on all threads and on one) and
// im2col at a shape's first call in each direction, and keeps the fastest:
// the second call of the shape, and f64 (im2col only), measure nothing.
TEST(ConvolutionChoice, DefaultMeasuresEachShapeOnce) {
#ifdef METART_HAVE_DNNL
  ::unsetenv("METART_CONVOLUTION");
  ::setenv("METART_CONVOLUTION_VERBOSE", "1", 1);
  metart_context *context = nullptr;
  metart_context_options options = {METART_BACKEND_CPU, 0, 0};
  ASSERT_EQ(metart_context_create(&options, &context), METART_OK);
  std::vector<int64_t> xShape = {1, 20, 64, 14, 14}, wShape = {1, 64, 64, 3, 3};
  std::mt19937 random(3);
  Values x(20 * 64 * 14 * 14, random), w(64 * 64 * 9, random);
  std::vector<float> y32(x.f32.size());
  std::vector<double> y64(x.f32.size());
  metart_tensor x32 = {x.f32.data(), METART_F32, 5, xShape.data()};
  metart_tensor w32 = {w.f32.data(), METART_F32, 5, wShape.data()};
  metart_tensor y32t = {y32.data(), METART_F32, 5, xShape.data()};
  metart_tensor x64 = {x.f64.data(), METART_F64, 5, xShape.data()};
  metart_tensor w64 = {w.f64.data(), METART_F64, 5, wShape.data()};
  metart_tensor y64t = {y64.data(), METART_F64, 5, xShape.data()};
  int64_t stride[2] = {1, 1}, padding[2] = {1, 1};
  ::testing::internal::CaptureStderr();
  for (int call = 0; call < 2; ++call) {
    EXPECT_EQ(
        metart_nn_conv2d(context, &x32, &w32, nullptr, stride, padding, &y32t),
        METART_OK);
    EXPECT_EQ(
        metart_nn_conv2d(context, &x64, &w64, nullptr, stride, padding, &y64t),
        METART_OK);
  }
  EXPECT_EQ(metart_nn_conv2d_backward_input(context, &y32t, &w32, stride,
                                            padding, &x32),
            METART_OK);
  std::string printed = ::testing::internal::GetCapturedStderr();
  ::unsetenv("METART_CONVOLUTION_VERBOSE");
  metart_context_destroy(context);
  std::vector<std::string> lines =
      linesStartingWith(printed, "metart: convolution ");
  ASSERT_EQ(lines.size(), 2u) << printed;
  EXPECT_EQ(lines[0].rfind("metart: convolution forward, 1 slices of 20 "
                           "images 64x14x14 -> 64x14x14: im2col ",
                           0),
            0u)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("metart: convolution input derivative, ", 0), 0u)
      << lines[1];
  for (const std::string &line : lines) {
    EXPECT_NE(line.find(" us, oneDNN "), std::string::npos) << line;
    EXPECT_NE(line.find(" us, oneDNN on one thread "), std::string::npos)
        << line;
  }
#else
  GTEST_SKIP() << "metart was built without oneDNN";
#endif
}

// im2col's columns for one image of 128 channels, 3x3 taps and 128 x 128
// outputs take 1152 x 16384 floats (72 MiB): more than the choice lets
// each thread keep for the run, so it times oneDNN alone.
TEST(ConvolutionChoice, LeavesOutIm2colWhoseColumnsAreLarge) {
#ifdef METART_HAVE_DNNL
  ::unsetenv("METART_CONVOLUTION");
  ::setenv("METART_CONVOLUTION_VERBOSE", "1", 1);
  metart_context *context = nullptr;
  metart_context_options options = {METART_BACKEND_CPU, 0, 0};
  ASSERT_EQ(metart_context_create(&options, &context), METART_OK);
  std::vector<int64_t> xShape = {1, 1, 128, 128, 128},
                       wShape = {1, 8, 128, 3, 3}, yShape = {1, 1, 8, 128, 128};
  std::vector<float> x(128 * 128 * 128, 0.5f), w(8 * 128 * 9, 0.25f),
      y(8 * 128 * 128);
  metart_tensor xt = {x.data(), METART_F32, 5, xShape.data()};
  metart_tensor wt = {w.data(), METART_F32, 5, wShape.data()};
  metart_tensor yt = {y.data(), METART_F32, 5, yShape.data()};
  int64_t stride[2] = {1, 1}, padding[2] = {1, 1};
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(metart_nn_conv2d(context, &xt, &wt, nullptr, stride, padding, &yt),
            METART_OK);
  std::string printed = ::testing::internal::GetCapturedStderr();
  ::unsetenv("METART_CONVOLUTION_VERBOSE");
  metart_context_destroy(context);
  std::vector<std::string> lines =
      linesStartingWith(printed, "metart: convolution forward, ");
  ASSERT_EQ(lines.size(), 1u) << printed;
  EXPECT_NE(lines[0].find(": im2col (not run), oneDNN "), std::string::npos)
      << lines[0];
  // An interior output sums all 128 x 9 taps of 0.5 * 0.25.
  EXPECT_FLOAT_EQ(y[64 * 128 + 64], 128 * 9 * 0.125f);
#else
  GTEST_SKIP() << "metart was built without oneDNN";
#endif
}

} // namespace
