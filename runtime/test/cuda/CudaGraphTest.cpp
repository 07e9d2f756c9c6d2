//===- CudaGraphTest.cpp - recording meta-iterations as CUDA graphs -------===//
//
// The CUDA backend's recordings: work recorded is not done until replayed,
// a replay reads the memory's current contents, a recorded copy from the
// host copies a snapshot, waiting and copying to the host fail while
// recording, index checks are read after each replay, and memory a
// recording uses is not handed out to others until it is dropped. Then the
// trainer: a hand-written step (a linear model under Adam, through the C
// API as compiled code calls it) trained with and without a graph gives
// the same parameters bit for bit, and the run says how many meta-iterations
// were replays; a step that cannot be recorded runs op by op and says why.
// Every test skips without a CUDA device.
//
//===----------------------------------------------------------------------===//

#include "Context.h"
#include "metart/train.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {

class CudaGraph : public ::testing::Test {
protected:
  void SetUp() override {
    if (!metart_backend_available(METART_BACKEND_CUDA))
      GTEST_SKIP() << "no CUDA device";
    metart_context_options options = {METART_BACKEND_CUDA, 0, 0};
    ASSERT_EQ(metart_context_create(&options, &context), METART_OK)
        << metart_context_last_error(nullptr);
  }
  void TearDown() override {
    if (context)
      metart_context_destroy(context);
  }

  metart::Backend &backend() { return *context->backend; }

  /// A device buffer of `values`, with a 1-d descriptor.
  struct Buffer {
    std::vector<int64_t> shape;
    metart_tensor tensor{};
  };
  Buffer buffer(const std::vector<double> &values) {
    Buffer b;
    b.shape = {static_cast<int64_t>(values.size())};
    void *data = nullptr;
    EXPECT_EQ(metart_buffer_alloc(context, values.size() * 8, &data),
              METART_OK);
    EXPECT_EQ(
        metart_copy_to_device(context, data, values.data(), values.size() * 8),
        METART_OK);
    b.tensor = {data, METART_F64, 1, b.shape.data()};
    return b;
  }
  std::vector<double> read(const Buffer &b) {
    std::vector<double> values(b.shape[0]);
    EXPECT_EQ(metart_copy_to_host(context, values.data(), b.tensor.data,
                                  values.size() * 8),
              METART_OK);
    return values;
  }
  void write(const Buffer &b, const std::vector<double> &values) {
    ASSERT_EQ(metart_copy_to_device(context, b.tensor.data, values.data(),
                                    values.size() * 8),
              METART_OK);
  }

  metart_context *context = nullptr;
};

TEST_F(CudaGraph, ReplaysDoTheRecordedWorkOnTheCurrentContents) {
  Buffer x = buffer({1, 2, 3}), y = buffer({0, 0, 0});
  ASSERT_FALSE(backend().endRecording().code == METART_OK);
  ASSERT_FALSE(backend().replay().code == METART_OK);
  ASSERT_EQ(backend().beginRecording().code, METART_OK);
  ASSERT_EQ(metart_nn_scale(context, &x.tensor, 2, &y.tensor), METART_OK);
  ASSERT_EQ(
      metart_nn_binary(context, METART_ADD, &y.tensor, &x.tensor, &y.tensor),
      METART_OK);
  ASSERT_EQ(backend().endRecording().code, METART_OK);
  // Recorded, not done.
  EXPECT_EQ(read(y), (std::vector<double>{0, 0, 0}));
  ASSERT_EQ(backend().replay().code, METART_OK);
  EXPECT_EQ(read(y), (std::vector<double>{3, 6, 9}));
  write(x, {-1, 10, 0.5});
  ASSERT_EQ(backend().replay().code, METART_OK);
  EXPECT_EQ(read(y), (std::vector<double>{-3, 30, 1.5}));
  backend().discardRecording();
  EXPECT_EQ(backend().replay().message, "no CUDA graph was recorded");
}

TEST_F(CudaGraph, ARecordedCopyFromTheHostCopiesASnapshot) {
  Buffer y = buffer({0, 0});
  std::vector<double> host = {4, 5};
  ASSERT_EQ(backend().beginRecording().code, METART_OK);
  ASSERT_EQ(metart_copy_to_device(context, y.tensor.data, host.data(), 16),
            METART_OK);
  ASSERT_EQ(backend().endRecording().code, METART_OK);
  host = {7, 8};
  ASSERT_EQ(backend().replay().code, METART_OK);
  EXPECT_EQ(read(y), (std::vector<double>{4, 5}));
}

// An offloaded parameter's prefetch: the copy runs on a second stream,
// behind the work queued before its start (which may still use the
// destination) and ahead of the work queued after its wait; a recording
// captures the fork and the join, and each replay copies what the pinned
// host memory holds then.
TEST_F(CudaGraph, PrefetchedCopiesKeepStreamOrderAndReplayTheCurrentHost) {
  constexpr int64_t count = 1 << 20;
  std::vector<double> ones(count, 1.0);
  Buffer x = buffer(ones), y = buffer(std::vector<double>(count, 0.0));
  void *pinned = nullptr;
  ASSERT_EQ(metart_host_buffer_alloc(context, count * 8, &pinned), METART_OK);
  auto *host = static_cast<double *>(pinned);
  std::fill(host, host + count, 3.0);
  auto step = [&]() {
    // y = 2 x reads x; the prefetch then overwrites x, and y += x reads
    // the copy.
    ASSERT_EQ(metart_nn_scale(context, &x.tensor, 2, &y.tensor), METART_OK);
    ASSERT_EQ(
        metart_copy_device_start(context, x.tensor.data, pinned, count * 8),
        METART_OK);
    ASSERT_EQ(metart_copy_wait(context, x.tensor.data), METART_OK);
    ASSERT_EQ(
        metart_nn_binary(context, METART_ADD, &y.tensor, &x.tensor, &y.tensor),
        METART_OK);
  };
  step();
  std::vector<double> got = read(y);
  EXPECT_EQ(got.front(), 5.0);
  EXPECT_EQ(got.back(), 5.0);
  ASSERT_EQ(backend().beginRecording().code, METART_OK);
  step();
  ASSERT_EQ(backend().endRecording().code, METART_OK);
  std::fill(host, host + count, -1.0);
  ASSERT_EQ(backend().replay().code, METART_OK);
  // x held 3 from the eager step: y = 2 * 3 + (-1).
  got = read(y);
  EXPECT_EQ(got.front(), 5.0);
  EXPECT_EQ(got.back(), 5.0);
  std::fill(host, host + count, 10.0);
  ASSERT_EQ(backend().replay().code, METART_OK);
  got = read(y);
  EXPECT_EQ(got.front(), 8.0);
  EXPECT_EQ(got.back(), 8.0);
  EXPECT_EQ(metart_copy_wait(context, x.tensor.data),
            METART_ERROR_INVALID_ARGUMENT);
}

TEST_F(CudaGraph, WaitingOrCopyingToTheHostFailsWhileRecording) {
  Buffer y = buffer({1});
  double host = 0;
  ASSERT_EQ(backend().beginRecording().code, METART_OK);
  EXPECT_EQ(metart_copy_to_host(context, &host, y.tensor.data, 8),
            METART_ERROR_UNSUPPORTED);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_copy_to_host: cannot copy to the host while recording "
               "a CUDA graph");
  EXPECT_EQ(metart_synchronize(context), METART_ERROR_UNSUPPORTED);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_synchronize: cannot wait for the device while "
               "recording a CUDA graph");
  backend().discardRecording();
  // The context works as before.
  ASSERT_EQ(metart_nn_scale(context, &y.tensor, 3, &y.tensor), METART_OK);
  EXPECT_EQ(read(y), (std::vector<double>{3}));
}

TEST_F(CudaGraph, IndexChecksAreReadAfterEachReplay) {
  int64_t labelShape[1] = {4}, hotShape[2] = {4, 3};
  int64_t labels[4] = {0, 2, 1, 2};
  void *labelData = nullptr, *hotData = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, sizeof(labels), &labelData),
            METART_OK);
  ASSERT_EQ(metart_buffer_alloc(context, 12 * 8, &hotData), METART_OK);
  ASSERT_EQ(metart_copy_to_device(context, labelData, labels, sizeof(labels)),
            METART_OK);
  metart_tensor label = {labelData, METART_I64, 1, labelShape};
  metart_tensor hot = {hotData, METART_F64, 2, hotShape};
  ASSERT_EQ(backend().beginRecording().code, METART_OK);
  ASSERT_EQ(metart_nn_one_hot(context, &label, &hot), METART_OK);
  ASSERT_EQ(backend().endRecording().code, METART_OK);
  ASSERT_EQ(backend().replay().code, METART_OK);
  std::vector<double> values(12);
  ASSERT_EQ(metart_copy_to_host(context, values.data(), hotData, 12 * 8),
            METART_OK);
  EXPECT_EQ(values, (std::vector<double>{1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1}));
  labels[2] = 7;
  ASSERT_EQ(metart_copy_to_device(context, labelData, labels, sizeof(labels)),
            METART_OK);
  metart::KernelStatus status = backend().replay();
  EXPECT_EQ(status.code, METART_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(status.message, "label 7 at position 2 is out of range [0, 3) "
                            "(found replaying a CUDA graph)");
}

TEST_F(CudaGraph, ARecordingHoldsAtMost256IndexChecks) {
  int64_t labelShape[1] = {1}, hotShape[2] = {1, 2};
  void *labelData = nullptr, *hotData = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, 8, &labelData), METART_OK);
  ASSERT_EQ(metart_buffer_alloc(context, 16, &hotData), METART_OK);
  metart_tensor label = {labelData, METART_I64, 1, labelShape};
  metart_tensor hot = {hotData, METART_F64, 2, hotShape};
  ASSERT_EQ(backend().beginRecording().code, METART_OK);
  for (int i = 0; i < 256; ++i)
    ASSERT_EQ(metart_nn_one_hot(context, &label, &hot), METART_OK);
  EXPECT_EQ(metart_nn_one_hot(context, &label, &hot), METART_ERROR_UNSUPPORTED);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_nn_one_hot: a recorded CUDA graph holds at most 256 "
               "index checks");
  backend().discardRecording();
}

TEST_F(CudaGraph, MemoryARecordingUsesIsHandedOutOnlyAfterItIsDropped) {
  Buffer x = buffer({1, 2});
  ASSERT_EQ(backend().beginRecording().code, METART_OK);
  void *temporary = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, 1 << 20, &temporary), METART_OK);
  int64_t shape[1] = {2};
  metart_tensor t = {temporary, METART_F64, 1, shape};
  ASSERT_EQ(metart_nn_scale(context, &x.tensor, 2, &t), METART_OK);
  ASSERT_EQ(metart_nn_scale(context, &t, 2, &x.tensor), METART_OK);
  metart_buffer_free(context, temporary);
  ASSERT_EQ(backend().endRecording().code, METART_OK);
  // The graph writes `temporary` on every replay: it is not handed out.
  void *other = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, 1 << 20, &other), METART_OK);
  EXPECT_NE(other, temporary);
  metart_buffer_free(context, other);
  ASSERT_EQ(backend().replay().code, METART_OK);
  EXPECT_EQ(read(x), (std::vector<double>{4, 8}));
  // Dropped, its memory is cached for anyone.
  backend().discardRecording();
  void *reused = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, 1 << 20, &reused), METART_OK);
  metart_buffer_free(context, reused);
  void *again = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, 1 << 20, &again), METART_OK);
  EXPECT_TRUE(again == temporary || again == other);
  metart_buffer_free(context, again);
}

//===----------------------------------------------------------------------===//
// The trainer
//===----------------------------------------------------------------------===//

constexpr int64_t kTasks = 4, kSamples = 5;

/// A descriptor of `data` with `shape`.
metart_tensor view(void *data, std::vector<int64_t> &shape) {
  return {data, METART_F64, static_cast<int32_t>(shape.size()), shape.data()};
}

/// y = x w^T + b on the query set, the mean squared error as the loss, its
/// gradient by hand, Adam: inputs w [1, 1], b [1], Adam's exp_avg (w, b),
/// exp_avg_sq (w, b), the step count, then the batch (support x, y, query
/// x, y: [T, N, 1]); outputs the same parameters and state, then the loss.
int32_t linearStep(metart_context *c, metart_tensor *const *in,
                   metart_tensor *const *out) {
  metart_scratch_reset(c);
  std::vector<int64_t> batch = {kTasks, kSamples, 1}, one = {1}, none = {};
  size_t bytes = kTasks * kSamples * 8;
  void *p = nullptr, *d = nullptr, *g = nullptr, *gw = nullptr, *gb = nullptr,
       *l = nullptr;
  for (void **s : {&p, &d, &g})
    if (int32_t status = metart_scratch_alloc(c, bytes, s))
      return status;
  for (void **s : {&gw, &gb, &l})
    if (int32_t status = metart_scratch_alloc(c, 8, s))
      return status;
  metart_tensor pred = view(p, batch), diff = view(d, batch),
                grad = view(g, batch), gradW = view(gw, one),
                gradB = view(gb, one), loss = view(l, none);
  const metart_tensor &qx = *in[9], &qy = *in[10];
  int64_t all[3] = {0, 1, 2}, samples[2] = {0, 1};
  int32_t s = metart_nn_linear(c, &qx, in[0], in[1], &pred);
  if (!s)
    s = metart_nn_binary(c, METART_SUB, &pred, &qy, &diff);
  if (!s)
    s = metart_nn_binary(c, METART_MUL, &diff, &diff, &grad);
  if (!s)
    s = metart_nn_reduce_mean(c, &grad, all, 3, &loss);
  if (!s)
    s = metart_nn_scale(c, &diff, 2.0 / (kTasks * kSamples), &grad);
  if (!s)
    s = metart_nn_reduce_sum(c, &grad, samples, 2, &gradB);
  if (!s)
    s = metart_nn_binary(c, METART_MUL, &grad, &qx, &grad);
  if (!s)
    s = metart_nn_reduce_sum(c, &grad, samples, 2, &gradW);
  std::vector<int64_t> square = {1, 1};
  metart_tensor gradWSquare = view(gw, square);
  if (!s)
    s = metart_increment(c, in[6], nullptr);
  if (!s)
    s = metart_adam_update(c, in[0], &gradWSquare, in[2], in[4], in[6], 0.05,
                           0.9, 0.999, 1e-8, 0, 0, nullptr);
  if (!s)
    s = metart_adam_update(c, in[1], &gradB, in[3], in[5], in[6], 0.05, 0.9,
                           0.999, 1e-8, 0, 0, nullptr);
  if (!s)
    s = metart_copy_device(c, out[7]->data, l, 8);
  return s;
}

/// `linearStep`, then a look at the loss from the host, which a recording
/// cannot do.
int32_t linearStepReadingTheLoss(metart_context *c, metart_tensor *const *in,
                                 metart_tensor *const *out) {
  if (int32_t s = linearStep(c, in, out))
    return s;
  double loss = 0;
  return metart_copy_to_host(c, &loss, out[7]->data, 8);
}

/// Trains the linear model (step `step`) for six meta-iterations on
/// `backend`; returns the result and the saved parameters.
metart_train_result trainLinear(metart_backend backend, bool noGraph,
                                std::vector<double> &params,
                                metart_function step = linearStep,
                                int32_t progress = 0) {
  metart_train_result result{};
  metart_context_options contextOptions = {backend, 0, 0};
  metart_context *context = nullptr;
  EXPECT_EQ(metart_context_create(&contextOptions, &context), METART_OK);
  metart_sinusoid_config config = {};
  config.amplitude[0] = 0.1;
  config.amplitude[1] = 5;
  config.phase[1] = 3.14;
  config.input[0] = -5;
  config.input[1] = 5;
  config.support = kSamples;
  config.query = kSamples;
  config.dtype = METART_F64;
  metart_tasks *tasks = nullptr;
  EXPECT_EQ(metart_tasks_create_sinusoid(&config, 3, &tasks), METART_OK);
  int64_t weightShape[2] = {1, 1}, biasShape[1] = {1};
  metart_param_spec specs[2] = {
      {"w", METART_F64, 2, weightShape, METART_INIT_CONSTANT, 1, 0.5},
      {"b", METART_F64, 1, biasShape, METART_INIT_CONSTANT, 1, -0.25}};
  metart_program program = {};
  program.name = "linear";
  program.step = step;
  program.params = specs;
  program.num_params = 2;
  program.state_per_param = 2;
  program.step_counter = 1;
  program.tasks = tasks;
  program.meta_batch = kTasks;
  program.iterations = 6;
  program.seed = 3;
  program.loss_name = "mse";
  for (int64_t &axis : program.mesh)
    axis = 1;
  std::string saved = std::string("cuda-graph-test-") +
                      (backend == METART_BACKEND_CUDA ? "cuda" : "cpu") +
                      (noGraph ? "-eager" : "") + ".safetensors";
  metart_train_options options = {};
  options.iterations = -1;
  options.save_params = saved.c_str();
  options.no_graph = noGraph;
  options.progress = progress;
  char error[512] = "";
  EXPECT_EQ(
      metart_train(context, &program, &options, &result, error, sizeof(error)),
      METART_OK)
      << error;
  metart_safetensors *file = nullptr;
  char message[256] = "";
  EXPECT_EQ(
      metart_safetensors_open(saved.c_str(), &file, message, sizeof(message)),
      METART_OK)
      << message;
  params.clear();
  for (const char *name : {"w", "b"}) {
    int32_t dtype = 0, rank = 0;
    const int64_t *shape = nullptr;
    const void *data = nullptr;
    EXPECT_EQ(metart_safetensors_find(file, name, &dtype, &rank, &shape, &data),
              METART_OK);
    double value = 0;
    std::memcpy(&value, data, 8);
    params.push_back(value);
  }
  metart_safetensors_close(file);
  metart_tasks_destroy(tasks);
  metart_context_destroy(context);
  return result;
}

TEST_F(CudaGraph, TrainingReplaysTheRecordedMetaIteration) {
  std::vector<double> graph, eager, cpu;
  metart_train_result replayed = trainLinear(METART_BACKEND_CUDA, false, graph);
  metart_train_result opByOp = trainLinear(METART_BACKEND_CUDA, true, eager);
  metart_train_result onCpu = trainLinear(METART_BACKEND_CPU, false, cpu);
  // The first meta-iteration warms up, the second is recorded and replayed,
  // as are the four after it.
  EXPECT_EQ(replayed.replayed_iterations, 5);
  EXPECT_EQ(opByOp.replayed_iterations, 0);
  EXPECT_EQ(onCpu.replayed_iterations, 0);
  EXPECT_EQ(replayed.iterations_run, 6);
  // The same kernels on the same data: the same bits.
  EXPECT_EQ(graph, eager);
  EXPECT_EQ(replayed.final_loss, opByOp.final_loss);
  // Six Adam steps of 0.05 moved the parameters; the CPU agrees.
  ASSERT_EQ(cpu.size(), 2u);
  EXPECT_GT(std::abs(graph[0] - 0.5), 0.1);
  for (size_t i = 0; i < 2; ++i)
    EXPECT_NEAR(graph[i], cpu[i], 1e-12);
  EXPECT_NEAR(replayed.final_loss, onCpu.final_loss,
              1e-12 * std::abs(onCpu.final_loss));
}

TEST_F(CudaGraph, AStepThatCannotBeRecordedRunsOpByOp) {
  std::vector<double> fallback, eager;
  testing::internal::CaptureStderr();
  metart_train_result result = trainLinear(METART_BACKEND_CUDA, false, fallback,
                                           linearStepReadingTheLoss, 1);
  std::string printed = testing::internal::GetCapturedStderr();
  trainLinear(METART_BACKEND_CUDA, true, eager);
  EXPECT_EQ(result.replayed_iterations, 0);
  EXPECT_EQ(result.iterations_run, 6);
  EXPECT_EQ(fallback, eager);
  EXPECT_NE(printed.find("metart: note: the meta-iterations ran op by op, "
                         "not as a CUDA graph: metart_copy_to_host: cannot "
                         "copy to the host while recording a CUDA graph"),
            std::string::npos)
      << printed;
}

} // namespace
