//===- CudaVsCpuReductionTest.cpp - CUDA kernels against the CPU, part 2 --===//
//
// The kernels that reduce: batch and layer normalisation, (log-)softmax,
// sums and means over dimensions, the losses, each over shapes that take
// the warp and the block paths of the CUDA kernels and empty reductions.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

namespace metart::test {
namespace {

constexpr metart_dtype kFloatTypes[] = {METART_F64, METART_F32};

TEST_F(CudaVsCpu, BatchNormOverDimensionsAndTasks) {
  struct Case {
    std::vector<int64_t> x, weight;
    int64_t channel;
    std::vector<int64_t> reduce;
  };
  Case cases[] = {
      {{4, 3, 5, 6}, {3}, 1, {0, 2, 3}},
      {{8, 2, 16, 16}, {2}, 1, {0, 2, 3}},
      {{2, 4, 3, 5}, {2, 3}, 2, {1, 3}},
      {{6, 4, 5}, {4}, 1, {0}},
      {{3, 2}, {2}, 1, {}},
  };
  for (metart_dtype dtype : kFloatTypes)
    for (const Case &bc : cases)
      expectSame({random(dtype, bc.x, -2, 3), random(dtype, bc.weight),
                  random(dtype, bc.weight), HostTensor(dtype, bc.x)},
                 {3},
                 [bc](metart_context *c, const std::vector<metart_tensor> &t) {
                   return metart_nn_batch_norm(
                       c, &t[0], &t[1], &t[2], bc.channel, bc.reduce.data(),
                       static_cast<int64_t>(bc.reduce.size()), 1e-5, &t[3]);
                 });
}

TEST_F(CudaVsCpu, LayerNormWithSharedAndBatchedWeights) {
  struct Case {
    std::vector<int64_t> x, weight;
  };
  Case cases[] = {{{5, 7}, {7}}, {{3, 4, 600}, {3, 600}}, {{2, 0, 4}, {4}}};
  for (metart_dtype dtype : kFloatTypes)
    for (const Case &lc : cases)
      expectSame(
          {random(dtype, lc.x, -2, 3), random(dtype, lc.weight),
           random(dtype, lc.weight), HostTensor(dtype, lc.x)},
          {3}, [](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_nn_layer_norm(c, &t[0], &t[1], &t[2], 1e-5, &t[3]);
          });
}

TEST_F(CudaVsCpu, SoftmaxAndLogSoftmaxAlongEveryAxis) {
  struct Case {
    std::vector<int64_t> x;
    int64_t axis;
  };
  Case cases[] = {{{4, 5, 6}, 2},
                  {{4, 5, 6}, 1},
                  {{4, 5, 6}, 0},
                  {{3, 1000}, 1},
                  {{2, 700, 3}, 1}};
  for (metart_dtype dtype : kFloatTypes)
    for (const Case &sc : cases)
      for (bool logarithm : {false, true})
        expectSame(
            {random(dtype, sc.x, -5, 5), HostTensor(dtype, sc.x)}, {1},
            [sc, logarithm](metart_context *c,
                            const std::vector<metart_tensor> &t) {
              return logarithm ? metart_nn_log_softmax(c, &t[0], sc.axis, &t[1])
                               : metart_nn_softmax(c, &t[0], sc.axis, &t[1]);
            });
}

TEST_F(CudaVsCpu, ReduceSumAndMeanOverDimensions) {
  struct Case {
    std::vector<int64_t> x, dims;
  };
  Case cases[] = {
      {{3, 4, 5, 6}, {}},
      {{3, 4, 5, 6}, {0}},
      {{3, 4, 5, 6}, {3}},
      {{3, 4, 5, 6}, {1, 2}},
      {{3, 4, 5, 6}, {0, 3}},
      {{3, 4, 5, 6}, {0, 1, 2, 3}},
      {{2000, 3}, {0}},
      {{3, 2000}, {1}},
      {{64, 2048}, {0}},
      // Few long results, split across blocks: batch norm's statistics,
      // a ragged last chunk, a kept inner axis, everything into one.
      {{40, 32, 28, 28}, {0, 2, 3}},
      {{5, 100003}, {1}},
      {{50000, 2}, {0}},
      {{300000}, {0}},
      {{3, 0}, {1}},
      {{}, {}},
      // Bias gradients: few results for the device's threads, each
      // result's rows split into chunks summed after in order.
      {{4096, 2048}, {0}},
      {{8, 512, 1024}, {0, 1}},
  };
  for (metart_dtype dtype : {METART_F64, METART_F32, METART_BF16, METART_F16})
    for (const Case &rc : cases) {
      std::vector<int64_t> y;
      for (size_t d = 0; d < rc.x.size(); ++d) {
        bool reduced = false;
        for (int64_t r : rc.dims)
          reduced |= r == static_cast<int64_t>(d);
        if (!reduced)
          y.push_back(rc.x[d]);
      }
      for (bool mean : {false, true})
        expectSame(
            {random(dtype, rc.x), HostTensor(dtype, y)}, {1},
            [rc, mean](metart_context *c, const std::vector<metart_tensor> &t) {
              auto n = static_cast<int64_t>(rc.dims.size());
              return mean ? metart_nn_reduce_mean(c, &t[0], rc.dims.data(), n,
                                                  &t[1])
                          : metart_nn_reduce_sum(c, &t[0], rc.dims.data(), n,
                                                 &t[1]);
            });
    }
}

TEST_F(CudaVsCpu, MseLossPerBatchEntry) {
  struct Case {
    std::vector<int64_t> x;
    int64_t batchRank;
  };
  Case cases[] = {
      {{4, 10}, 1}, {{4, 10}, 0}, {{3, 2, 7}, 2}, {{5, 900}, 1}, {{3, 0}, 1}};
  for (metart_dtype dtype : kFloatTypes)
    for (const Case &lc : cases) {
      std::vector<int64_t> y(lc.x.begin(), lc.x.begin() + lc.batchRank);
      expectSame(
          {random(dtype, lc.x), random(dtype, lc.x), HostTensor(dtype, y)}, {2},
          [lc](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_nn_mse_loss(c, &t[0], &t[1], lc.batchRank, &t[2]);
          });
    }
}

TEST_F(CudaVsCpu, CrossEntropyLossPerBatchEntry) {
  struct Case {
    std::vector<int64_t> logits;
    int64_t batchRank;
  };
  Case cases[] = {
      {{4, 6, 5}, 1}, {{4, 6, 5}, 0}, {{3, 100}, 1}, {{2, 3, 4, 7}, 2}};
  for (metart_dtype dtype : kFloatTypes)
    for (metart_dtype labelType : {METART_I32, METART_I64})
      for (const Case &lc : cases) {
        std::vector<int64_t> labels(lc.logits.begin(), lc.logits.end() - 1);
        std::vector<int64_t> y(labels.begin(), labels.begin() + lc.batchRank);
        expectSame(
            {random(dtype, lc.logits, -4, 4),
             indices(labelType, labels, lc.logits.back()),
             HostTensor(dtype, y)},
            {2}, [lc](metart_context *c, const std::vector<metart_tensor> &t) {
              return metart_nn_cross_entropy_loss(c, &t[0], &t[1], lc.batchRank,
                                                  &t[2]);
            });
      }
}

TEST_F(CudaVsCpu, CrossEntropyLossReportsTheFirstLabelOutOfRange) {
  for (metart_dtype labelType : {METART_I32, METART_I64}) {
    HostTensor labels = indices(labelType, {4, 6}, 5);
    labels.set(9, 5);
    labels.set(13, -2);
    expectSame(
        {random(METART_F32, {4, 6, 5}), labels, HostTensor(METART_F32, {4})},
        {}, [](metart_context *c, const std::vector<metart_tensor> &t) {
          return metart_nn_cross_entropy_loss(c, &t[0], &t[1], 1, &t[2]);
        });
  }
}

} // namespace
} // namespace metart::test
