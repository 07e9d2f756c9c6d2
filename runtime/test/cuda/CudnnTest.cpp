//===- CudnnTest.cpp - cuDNN's convolutions against the CPU's -------------===//
//
// With METART_CONVOLUTION=cudnn the CUDA backend computes every
// convolution cuDNN handles through cuDNN, unmeasured: the three kernels
// against the CPU backend's (im2col + OpenBLAS or oneDNN, an independent
// implementation), in f32 and f64, on the shapes of the ConvNet examples
// (four tasks' weights, five and fifteen images each, 1 and 32 channels,
// 28x28 down to 3x3) and on odd ones (strides and padding per dimension,
// 1x1, one image per weight slice, kernels as large as the padded input).
// The same with METART_CONVOLUTION=cudnn-grouped: the tasks' convolutions
// as the groups of one call. Skips where cuDNN does not load (the reason
// printed), or without a GPU.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <cstdlib>

namespace metart::test {
namespace {

const ConvCase kCases[] = {
    // The ConvNet MAML example: per-task weights, support and query sets.
    {{4, 5, 1, 28, 28}, {4, 32, 1, 3, 3}, {1, 1}, {1, 1}},
    {{4, 15, 32, 14, 14}, {4, 32, 32, 3, 3}, {1, 1}, {1, 1}},
    {{4, 5, 32, 3, 3}, {4, 32, 32, 3, 3}, {1, 1}, {1, 1}},
    // Shared weights (ProtoNets), 64 channels.
    {{20, 64, 7, 7}, {64, 64, 3, 3}, {1, 1}, {1, 1}},
    // Strides and padding that differ by dimension.
    {{3, 2, 10, 7}, {5, 2, 3, 2}, {2, 3}, {1, 0}},
    // 1x1 with and without a stride.
    {{2, 4, 5, 6}, {3, 4, 1, 1}, {1, 1}, {0, 0}},
    {{2, 4, 5, 6}, {3, 4, 1, 1}, {2, 2}, {0, 0}},
    // One image per weight slice.
    {{3, 2, 5, 5}, {3, 4, 2, 3, 3}, {2, 1}, {0, 1}},
    // A kernel as large as the padded input.
    {{2, 1, 3, 3}, {2, 1, 5, 5}, {1, 1}, {1, 1}},
};

class CudnnVsCpu : public CudaVsCpu {
protected:
  /// METART_CONVOLUTION for the CUDA context.
  virtual const char *choice() const { return "cudnn"; }
  /// The three kernels on every case, in f32 and f64.
  void checkAll();
  void SetUp() override {
    ::setenv("METART_CONVOLUTION", choice(), 1);
    CudaVsCpu::SetUp();
    ::unsetenv("METART_CONVOLUTION");
    if (IsSkipped() || HasFatalFailure())
      return;
    // Forced, cuDNN that does not load is an error that says why.
    ConvCase probe = kCases[4];
    Outcome outcome = runOn(
        cuda,
        {random(METART_F32, probe.x), random(METART_F32, probe.weight),
         HostTensor(METART_F32, convOutput(probe))},
        {2}, 0, [&](metart_context *c, const std::vector<metart_tensor> &t) {
          return metart_nn_conv2d(c, &t[0], &t[1], nullptr, probe.stride,
                                  probe.padding, &t[2]);
        });
    if (outcome.status != METART_OK &&
        outcome.error.find("cuDNN") != std::string::npos)
      GTEST_SKIP() << outcome.error;
  }
};

void CudnnVsCpu::checkAll() {
  for (metart_dtype dtype : {METART_F32, METART_F64})
    for (const ConvCase &cc : kCases) {
      std::vector<int64_t> biasShape(cc.weight.begin(), cc.weight.end() - 3);
      for (bool bias : {true, false})
        expectSame(
            {random(dtype, cc.x), random(dtype, cc.weight),
             HostTensor(dtype, convOutput(cc)), random(dtype, biasShape)},
            {2},
            [cc, bias](metart_context *c, const std::vector<metart_tensor> &t) {
              return metart_nn_conv2d(c, &t[0], &t[1], bias ? &t[3] : nullptr,
                                      cc.stride, cc.padding, &t[2]);
            },
            kGemmTolerance);
      HostTensor grad = random(dtype, convOutput(cc));
      expectSame(
          {grad, random(dtype, cc.weight), HostTensor(dtype, cc.x)}, {2},
          [cc](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_nn_conv2d_backward_input(c, &t[0], &t[1], cc.stride,
                                                   cc.padding, &t[2]);
          },
          kGemmTolerance);
      expectSame(
          {random(dtype, cc.x), grad, HostTensor(dtype, cc.weight)}, {2},
          [cc](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_nn_conv2d_backward_weight(c, &t[0], &t[1], cc.stride,
                                                    cc.padding, &t[2]);
          },
          kGemmTolerance);
    }
}

/// The tasks' convolutions as the groups of one call (the operands'
/// tasks and images exchanged around it).
class CudnnGroupedVsCpu : public CudnnVsCpu {
protected:
  const char *choice() const override { return "cudnn-grouped"; }
};

TEST_F(CudnnVsCpu, ConvolutionsAndTheirDerivatives) { checkAll(); }
TEST_F(CudnnGroupedVsCpu, ConvolutionsAndTheirDerivatives) { checkAll(); }

} // namespace
} // namespace metart::test
