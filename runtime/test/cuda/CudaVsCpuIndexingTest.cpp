//===- CudaVsCpuIndexingTest.cpp - CUDA kernels against the CPU, part 3 ---===//
//
// Lookups, their derivative and one-hot encoding (ids out of range are
// reported alike), transposes and broadcasts, and the optimizer updates.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

namespace metart::test {
namespace {

constexpr metart_dtype kFloatTypes[] = {METART_F64, METART_F32};
/// Copies move 16-bit elements as they are on CUDA.
constexpr metart_dtype kEveryFloatType[] = {METART_F64, METART_F32, METART_BF16,
                                            METART_F16};

TEST_F(CudaVsCpu, EmbeddingAndItsDerivativeWithRepeatedIds) {
  struct Case {
    std::vector<int64_t> ids, table;
  };
  Case cases[] = {{{3, 4}, {10, 6}}, {{3, 4}, {3, 10, 6}}, {{40}, {3, 129}}};
  for (metart_dtype dtype : kFloatTypes)
    for (metart_dtype idType : {METART_I32, METART_I64})
      for (const Case &ec : cases) {
        int64_t rows = ec.table[ec.table.size() - 2];
        // Few distinct ids: the derivative adds several rows into one.
        HostTensor ids = indices(idType, ec.ids, std::min<int64_t>(rows, 3));
        std::vector<int64_t> y = ec.ids;
        y.push_back(ec.table.back());
        expectSame({ids, random(dtype, ec.table), HostTensor(dtype, y)}, {2},
                   [](metart_context *c, const std::vector<metart_tensor> &t) {
                     return metart_nn_embedding(c, &t[0], &t[1], &t[2]);
                   });
        expectSame({ids, random(dtype, y), HostTensor(dtype, ec.table)}, {2},
                   [](metart_context *c, const std::vector<metart_tensor> &t) {
                     return metart_nn_embedding_backward(c, &t[0], &t[1],
                                                         &t[2]);
                   });
      }
}

TEST_F(CudaVsCpu, IdsAndLabelsOutOfRangeAreReportedAlike) {
  for (metart_dtype idType : {METART_I32, METART_I64}) {
    HostTensor ids = indices(idType, {3, 4}, 10);
    ids.set(8, -1);
    ids.set(5, 10);
    expectSame(
        {ids, random(METART_F32, {10, 6}), HostTensor(METART_F32, {3, 4, 6})},
        {}, [](metart_context *c, const std::vector<metart_tensor> &t) {
          return metart_nn_embedding(c, &t[0], &t[1], &t[2]);
        });
    expectSame(
        {ids, random(METART_F32, {3, 4, 6}), HostTensor(METART_F32, {10, 6})},
        {}, [](metart_context *c, const std::vector<metart_tensor> &t) {
          return metart_nn_embedding_backward(c, &t[0], &t[1], &t[2]);
        });
    HostTensor labels = indices(idType, {7}, 5);
    labels.set(6, 5);
    expectSame({labels, HostTensor(METART_F64, {7, 5})}, {},
               [](metart_context *c, const std::vector<metart_tensor> &t) {
                 return metart_nn_one_hot(c, &t[0], &t[1]);
               });
  }
}

TEST_F(CudaVsCpu, OneHot) {
  for (metart_dtype dtype : kFloatTypes)
    for (metart_dtype labelType : {METART_I32, METART_I64})
      expectSame(
          {indices(labelType, {2, 3, 4}, 9), HostTensor(dtype, {2, 3, 4, 9})},
          {1}, [](metart_context *c, const std::vector<metart_tensor> &t) {
            return metart_nn_one_hot(c, &t[0], &t[1]);
          });
}

TEST_F(CudaVsCpu, TransposeAndBroadcast) {
  struct Transpose {
    std::vector<int64_t> x, permutation;
  };
  Transpose transposes[] = {{{2, 3, 4, 5}, {3, 1, 0, 2}},
                            {{2, 3, 4, 5}, {0, 1, 3, 2}},
                            {{2, 3, 4, 5}, {0, 1, 2, 3}},
                            {{70, 130}, {1, 0}},
                            {{}, {}}};
  for (metart_dtype dtype : kEveryFloatType)
    for (const Transpose &tc : transposes) {
      std::vector<int64_t> y;
      for (int64_t p : tc.permutation)
        y.push_back(tc.x[p]);
      expectSame({random(dtype, tc.x), HostTensor(dtype, y)}, {1},
                 [tc](metart_context *c, const std::vector<metart_tensor> &t) {
                   return metart_nn_transpose(c, &t[0], tc.permutation.data(),
                                              &t[1]);
                 });
    }
  struct Broadcast {
    std::vector<int64_t> x, dims, y;
  };
  Broadcast broadcasts[] = {{{3, 5}, {1}, {3, 4, 5}},
                            {{5}, {0, 1}, {2, 3, 5}},
                            {{3}, {1}, {3, 7}},
                            {{}, {0}, {4}}};
  for (metart_dtype dtype : kEveryFloatType)
    for (const Broadcast &bc : broadcasts)
      expectSame({random(dtype, bc.x), HostTensor(dtype, bc.y)}, {1},
                 [bc](metart_context *c, const std::vector<metart_tensor> &t) {
                   return metart_nn_broadcast(
                       c, &t[0], bc.dims.data(),
                       static_cast<int64_t>(bc.dims.size()), &t[1]);
                 });
}

TEST_F(CudaVsCpu, SgdUpdates) {
  struct Case {
    double lr, momentum, weightDecay;
  };
  Case cases[] = {
      {0.1, 0, 0}, {0.05, 0.9, 0}, {0.05, 0.9, 0.01}, {0.1, 0, 0.1}};
  for (metart_dtype dtype : kFloatTypes)
    for (const Case &sc : cases)
      expectSame({random(dtype, {3, 101}), random(dtype, {3, 101}),
                  random(dtype, {3, 101})},
                 {},
                 [sc](metart_context *c, const std::vector<metart_tensor> &t) {
                   metart_status status = METART_OK;
                   // Several steps: the momentum buffer carries over.
                   for (int step = 0; step < 3 && status == METART_OK; ++step)
                     status = metart_sgd_update(
                         c, &t[0], &t[1], sc.momentum != 0 ? &t[2] : nullptr,
                         sc.lr, sc.momentum, sc.weightDecay, nullptr);
                   return status;
                 });
}

TEST_F(CudaVsCpu, AdamAndAdamWUpdates) {
  for (metart_dtype dtype : kFloatTypes)
    for (int decoupled : {0, 1})
      for (double weightDecay : {0.0, 0.01}) {
        HostTensor expAvgSq = random(dtype, {4, 77}, 0, 0.1);
        // The step count lives in the context's memory; each step
        // counts itself there first, as compiled code does.
        expectSame(
            {random(dtype, {4, 77}), random(dtype, {4, 77}),
             random(dtype, {4, 77}, -0.1, 0.1), expAvgSq,
             HostTensor(METART_I64, {})},
            {}, [=](metart_context *c, const std::vector<metart_tensor> &t) {
              metart_status status = METART_OK;
              for (int step = 1; step <= 4 && status == METART_OK; ++step) {
                status = metart_increment(c, &t[4], nullptr);
                if (status == METART_OK)
                  status = metart_adam_update(c, &t[0], &t[1], &t[2], &t[3],
                                              &t[4], 1e-3, 0.9, 0.999, 1e-8,
                                              weightDecay, decoupled, nullptr);
              }
              return status;
            });
      }
}

TEST_F(CudaVsCpu, UpdateGuardAndGatedUpdates) {
  // Gradients of two sizes (one longer than a block), a loss, the guard's
  // norms and gate, then Adam and SGD behind the gate: with and without
  // clipping, and with a NaN or an overflowing gradient (nothing updated).
  for (metart_dtype dtype : kFloatTypes)
    for (int broken : {0, 1, 2})
      for (double clip : {0.0, 0.5}) {
        HostTensor big = random(dtype, {3, 301}), small = random(dtype, {7});
        if (broken == 1)
          big.set(500, std::nan(""));
        if (broken == 2 && dtype == METART_F32)
          small.set(3, 3e19);
        HostTensor loss = random(dtype, {}, 0, 1);
        expectSame(
            {big, small, loss, HostTensor(METART_F64, {2}),
             HostTensor(METART_F64, {2}), random(dtype, {3, 301}),
             random(dtype, {3, 301}, -0.1, 0.1),
             random(dtype, {3, 301}, 0, 0.1), HostTensor(METART_I64, {}),
             random(dtype, {7})},
            {3, 4},
            [clip](metart_context *c, const std::vector<metart_tensor> &t) {
              const metart_tensor *grads[] = {&t[0], &t[1]};
              metart_status status =
                  metart_update_guard(c, &t[2], grads, 2, clip, &t[3], &t[4]);
              if (status == METART_OK)
                status = metart_increment(c, &t[8], &t[4]);
              if (status == METART_OK)
                status =
                    metart_adam_update(c, &t[5], &t[0], &t[6], &t[7], &t[8],
                                       1e-3, 0.9, 0.999, 1e-8, 0, 0, &t[4]);
              if (status == METART_OK)
                status = metart_sgd_update(c, &t[9], &t[1], nullptr, 0.1, 0,
                                           0.01, &t[4]);
              return status;
            });
      }
}

} // namespace
} // namespace metart::test
