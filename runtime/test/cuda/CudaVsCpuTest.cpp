//===- CudaVsCpuTest.cpp - CUDA kernels against the CPU backend, part 1 ---===//
//
// Elementwise kernels, products and convolutions, pooling: random inputs
// through both backends (harness in Harness.h), in f64 and f32, over shapes
// that reach every path of the CUDA kernels (batched weights shared by
// several images or one each, 1x1 convolutions, overlapping windows, ties,
// empty dimensions, grid-stride loops over more elements than one launch
// has threads).
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <cmath>
#include <iterator>
#include <limits>

namespace metart::test {
namespace {

constexpr metart_dtype kFloatTypes[] = {METART_F64, METART_F32};
/// With the 16-bit types, which CUDA computes on as they are (in f32,
/// rounded once) and the CPU through f32 copies.
constexpr metart_dtype kEveryFloatType[] = {METART_F64, METART_F32, METART_BF16,
                                            METART_F16};

TEST_F(CudaVsCpu, FillsEveryElementType) {
  for (metart_dtype dtype : {METART_F32, METART_F64, METART_BF16, METART_F16,
                             METART_I32, METART_I64})
    expectSame({HostTensor(dtype, {3, 1001})}, {0},
               [](metart_context *c, const std::vector<metart_tensor> &t) {
                 return metart_fill(c, &t[0], -7.0);
               });
}

TEST_F(CudaVsCpu, UnaryOps) {
  for (metart_dtype dtype : kEveryFloatType)
    for (int op = METART_NEG; op <= METART_GELU; ++op) {
      SCOPED_TRACE("op " + std::to_string(op) + ", dtype " +
                   std::to_string(dtype));
      bool positive =
          op == METART_LOG || op == METART_SQRT || op == METART_RSQRT;
      HostTensor x = random(dtype, {5, 203}, positive ? 0.05 : -4.0, 4.0);
      if (!positive)
        x.set(7, std::numeric_limits<double>::quiet_NaN());
      expectSame({x, HostTensor(dtype, {5, 203})}, {1},
                 [op](metart_context *c, const std::vector<metart_tensor> &t) {
                   return metart_nn_unary(c, static_cast<metart_unary_op>(op),
                                          &t[0], &t[1]);
                 });
    }
}

TEST_F(CudaVsCpu, ScaleAndBinaryOpsAlsoInPlace) {
  for (metart_dtype dtype : kEveryFloatType) {
    HostTensor a = random(dtype, {4, 3, 77});
    HostTensor b = random(dtype, {4, 3, 77}, 0.5, 2.0);
    expectSame({a, HostTensor(dtype, {4, 3, 77})}, {1},
               [](metart_context *c, const std::vector<metart_tensor> &t) {
                 return metart_nn_scale(c, &t[0], -0.37, &t[1]);
               });
    for (int op = METART_ADD; op <= METART_DIV; ++op) {
      auto binary = static_cast<metart_binary_op>(op);
      expectSame(
          {a, b, HostTensor(dtype, {4, 3, 77})}, {2},
          [binary](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_nn_binary(c, binary, &t[0], &t[1], &t[2]);
          });
      // The result is the first operand.
      expectSame(
          {a, b}, {},
          [binary](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_nn_binary(c, binary, &t[0], &t[1], &t[0]);
          });
    }
  }
}

TEST_F(CudaVsCpu, GridStrideLoopsCoverLargeTensors) {
  // More elements than 65535 blocks of 256 threads.
  int64_t n = 17000001;
  expectSame({random(METART_F32, {n}), HostTensor(METART_F32, {n})}, {1},
             [](metart_context *c, const std::vector<metart_tensor> &t) {
               return metart_nn_scale(c, &t[0], 3.0, &t[1]);
             });
  int64_t dims[] = {0};
  expectSame({random(METART_F64, {n}), HostTensor(METART_F64, {})}, {1},
             [&](metart_context *c, const std::vector<metart_tensor> &t) {
               return metart_nn_reduce_sum(c, &t[0], dims, 1, &t[1]);
             });
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

TEST_F(CudaVsCpu, LinearUnbatchedAndBatchedOverTasks) {
  struct Shapes {
    std::vector<int64_t> x, weight, bias, y;
  };
  Shapes cases[] = {
      {{7, 5}, {4, 5}, {4}, {7, 4}},
      {{7, 5}, {4, 5}, {}, {7, 4}},
      {{3, 6, 5}, {3, 4, 5}, {3, 4}, {3, 6, 4}},
      {{2, 3, 4, 5}, {2, 6, 5}, {2, 6}, {2, 3, 4, 6}},
      {{2, 3, 4, 5}, {2, 3, 6, 5}, {}, {2, 3, 4, 6}},
      {{4, 0}, {3, 0}, {3}, {4, 3}},
      {{4, 0}, {3, 0}, {}, {4, 3}},
      {{0, 5}, {3, 5}, {3}, {0, 3}},
  };
  for (metart_dtype dtype : kFloatTypes)
    for (const Shapes &s : cases) {
      std::vector<HostTensor> tensors = {
          random(dtype, s.x), random(dtype, s.weight), HostTensor(dtype, s.y)};
      bool bias = !s.bias.empty();
      if (bias)
        tensors.push_back(random(dtype, s.bias));
      expectSame(
          tensors, {2},
          [bias](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_nn_linear(c, &t[0], &t[1], bias ? &t[3] : nullptr,
                                    &t[2]);
          },
          kGemmTolerance);
    }
}

TEST_F(CudaVsCpu, MatmulWithEveryTransposition) {
  int64_t m = 5, n = 6, k = 7;
  for (metart_dtype dtype : kFloatTypes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        std::vector<int64_t> a = {2, 3, ta ? k : m, ta ? m : k};
        std::vector<int64_t> b = {2, 3, tb ? n : k, tb ? k : n};
        expectSame(
            {random(dtype, a), random(dtype, b),
             HostTensor(dtype, {2, 3, m, n})},
            {2},
            [ta, tb](metart_context *c, const std::vector<metart_tensor> &t) {
              return metart_nn_matmul(c, &t[0], &t[1], ta, tb, &t[2]);
            },
            kGemmTolerance);
      }
  // An empty contraction is a zero product.
  expectSame({random(METART_F64, {3, 0}), random(METART_F64, {0, 4}),
              HostTensor(METART_F64, {3, 4})},
             {2}, [](metart_context *c, const std::vector<metart_tensor> &t) {
               return metart_nn_matmul(c, &t[0], &t[1], 0, 0, &t[2]);
             });
}

// Every pair of float types, with values that round to even, overflow f16,
// are subnormal in f16, infinite and NaN: the same bits on both backends.
TEST_F(CudaVsCpu, ConversionsBetweenFloatTypes) {
  const metart_dtype types[] = {METART_F64, METART_F32, METART_BF16,
                                METART_F16};
  const double special[] = {1.0 + 1.0 / 256, // a bf16 tie: to even
                            1.0 + 3.0 / 256, // a bf16 tie: up
                            65504,
                            65520, // f16's largest, then infinity
                            3e-6,
                            -1e-7, // f16 subnormals
                            1e-30,
                            -0.0, // a bf16 value f16 flushes
                            INFINITY,
                            -INFINITY,
                            NAN};
  for (metart_dtype from : types)
    for (metart_dtype to : types) {
      HostTensor x = random(from, {1000}, -300, 300);
      for (size_t i = 0; i < std::size(special); ++i)
        x.set(static_cast<int64_t>(i), special[i]);
      expectSame(
          {x, HostTensor(to, {1000})}, {1},
          [](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_convert(c, &t[0], &t[1]);
          },
          Tolerance{0, 0, 0});
    }
}

// bf16 and f16 products run on tensor cores from the 16-bit operands (the
// CPU widens them to f32): both accumulate in f32 and round once, so they
// agree to an ulp. Sizes past cuBLAS's tensor-core tiles and odd ones.
TEST_F(CudaVsCpu, ReducedPrecisionProductsOnTensorCores) {
  for (metart_dtype dtype : {METART_BF16, METART_F16}) {
    for (bool bias : {false, true}) {
      std::vector<HostTensor> tensors = {random(dtype, {2, 130, 96}),
                                         random(dtype, {2, 72, 96}),
                                         HostTensor(dtype, {2, 130, 72})};
      if (bias)
        tensors.push_back(random(dtype, {2, 72}));
      expectSame(
          tensors, {2},
          [bias](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_nn_linear(c, &t[0], &t[1], bias ? &t[3] : nullptr,
                                    &t[2]);
          },
          kGemmTolerance);
    }
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        int64_t m = 67, n = 129, k = 40;
        expectSame(
            {random(dtype, {3, ta ? k : m, ta ? m : k}),
             random(dtype, {3, tb ? n : k, tb ? k : n}),
             HostTensor(dtype, {3, m, n})},
            {2},
            [ta, tb](metart_context *c, const std::vector<metart_tensor> &t) {
              return metart_nn_matmul(c, &t[0], &t[1], ta, tb, &t[2]);
            },
            kGemmTolerance);
      }
  }
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

const ConvCase kConvCases[] = {
    // Padding and overlapping windows.
    {{2, 3, 9, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}},
    // Strides and padding that differ by dimension.
    {{3, 2, 10, 7}, {5, 2, 3, 2}, {2, 3}, {1, 0}},
    // 1x1, stride 1, no padding: the images are the columns.
    {{2, 4, 5, 6}, {3, 4, 1, 1}, {1, 1}, {0, 0}},
    // 1x1 with a stride is not.
    {{2, 4, 5, 6}, {3, 4, 1, 1}, {2, 2}, {0, 0}},
    // Weights batched over tasks, three images per task.
    {{2, 3, 2, 6, 6}, {2, 4, 2, 3, 3}, {1, 1}, {1, 1}},
    // One image per task.
    {{3, 2, 5, 5}, {3, 4, 2, 3, 3}, {2, 1}, {0, 1}},
    {{3, 4, 5, 5}, {3, 2, 4, 1, 1}, {1, 1}, {0, 0}},
    // A kernel as large as the padded input.
    {{2, 1, 3, 3}, {2, 1, 5, 5}, {1, 1}, {1, 1}},
};

TEST_F(CudaVsCpu, Conv2dForwardWithAndWithoutBias) {
  for (metart_dtype dtype : kFloatTypes)
    for (const ConvCase &cc : kConvCases)
      for (bool bias : {true, false}) {
        std::vector<int64_t> biasShape(cc.weight.begin(), cc.weight.end() - 3);
        std::vector<HostTensor> tensors = {
            random(dtype, cc.x), random(dtype, cc.weight),
            HostTensor(dtype, convOutput(cc)), random(dtype, biasShape)};
        expectSame(
            tensors, {2},
            [cc, bias](metart_context *c, const std::vector<metart_tensor> &t) {
              return metart_nn_conv2d(c, &t[0], &t[1], bias ? &t[3] : nullptr,
                                      cc.stride, cc.padding, &t[2]);
            },
            kGemmTolerance);
      }
}

TEST_F(CudaVsCpu, Conv2dDerivatives) {
  for (metart_dtype dtype : kFloatTypes)
    for (const ConvCase &cc : kConvCases) {
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

TEST_F(CudaVsCpu, Conv2dWithEmptyBatches) {
  ConvCase cc{{0, 3, 5, 5}, {2, 3, 3, 3}, {1, 1}, {0, 0}};
  ConvCase batched{{2, 0, 3, 5, 5}, {2, 2, 3, 3, 3}, {1, 1}, {0, 0}};
  for (const ConvCase &e : {cc, batched}) {
    expectSame({random(METART_F64, e.x), HostTensor(METART_F64, e.weight),
                random(METART_F64, convOutput(e))},
               {1},
               [e](metart_context *c, const std::vector<metart_tensor> &t) {
                 // The weight derivative of slices without images is zero.
                 return metart_nn_conv2d_backward_weight(
                     c, &t[0], &t[2], e.stride, e.padding, &t[1]);
               });
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolCase {
  std::vector<int64_t> x;
  int64_t kernel[2], stride[2], padding[2];
};

std::vector<int64_t> poolOutput(const PoolCase &p) {
  size_t r = p.x.size();
  std::vector<int64_t> y(p.x.begin(), p.x.end() - 2);
  y.push_back((p.x[r - 2] + 2 * p.padding[0] - p.kernel[0]) / p.stride[0] + 1);
  y.push_back((p.x[r - 1] + 2 * p.padding[1] - p.kernel[1]) / p.stride[1] + 1);
  return y;
}

const PoolCase kPoolCases[] = {
    {{2, 3, 7, 8}, {3, 3}, {2, 2}, {1, 1}},
    {{2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}},
    {{4, 6, 5}, {3, 2}, {1, 1}, {1, 0}},
    {{1, 2, 9, 4}, {4, 3}, {3, 1}, {2, 1}},
};

/// Inputs with ties (small integers) and, in f32 and f64 alike, one NaN.
HostTensor poolInput(HostTensor t, bool nan) {
  for (int64_t i = 0; i < t.count(); ++i)
    t.set(i, std::floor(t.at(i) * 3));
  if (nan)
    t.set(t.count() / 2, std::numeric_limits<double>::quiet_NaN());
  return t;
}

TEST_F(CudaVsCpu, PoolingAndItsDerivatives) {
  for (metart_dtype dtype : kFloatTypes)
    for (const PoolCase &pc : kPoolCases)
      for (bool nan : {false, true}) {
        HostTensor x = poolInput(random(dtype, pc.x), nan);
        std::vector<int64_t> out = poolOutput(pc);
        auto pooled = [&](auto fn) {
          expectSame(
              {x, HostTensor(dtype, out)}, {1},
              [pc, fn](metart_context *c, const std::vector<metart_tensor> &t) {
                return fn(c, &t[0], pc.kernel, pc.stride, pc.padding, &t[1]);
              });
        };
        pooled(metart_nn_max_pool2d);
        pooled(metart_nn_avg_pool2d);
        HostTensor grad = random(dtype, out);
        expectSame(
            {x, grad, HostTensor(dtype, pc.x)}, {2},
            [pc](metart_context *c, const std::vector<metart_tensor> &t) {
              return metart_nn_max_pool2d_backward(
                  c, &t[0], &t[1], pc.kernel, pc.stride, pc.padding, &t[2]);
            });
        expectSame(
            {x, random(dtype, pc.x), HostTensor(dtype, out)}, {2},
            [pc](metart_context *c, const std::vector<metart_tensor> &t) {
              return metart_nn_max_pool2d_gather(c, &t[0], &t[1], pc.kernel,
                                                 pc.stride, pc.padding, &t[2]);
            });
        expectSame(
            {grad, HostTensor(dtype, pc.x)}, {1},
            [pc](metart_context *c, const std::vector<metart_tensor> &t) {
              return metart_nn_avg_pool2d_backward(
                  c, &t[0], pc.kernel, pc.stride, pc.padding, &t[1]);
            });
      }
}

} // namespace
} // namespace metart::test
