//===- Session.cpp - the runtime context the measurements share -----------===//

#include "Session.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

using namespace metac::calibrate;

/// Every axis of the mesh: the world, whatever the layout.
static constexpr int32_t kWorld = METART_ALL_AXES;

double DeviceTensor::bytes() const {
  double elements = 1;
  for (int64_t d : shape)
    elements *= double(d);
  return elements *
         (tensor.dtype == METART_F64 || tensor.dtype == METART_I64 ? 8 : 4);
}

double metac::calibrate::now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double metac::calibrate::median(llvm::SmallVectorImpl<double> &values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int Session::operandCopies(double bytes) const {
  if (hotOperands)
    return 1;
  constexpr double kPoolBytes = 256.0 * 1048576;
  constexpr int kMostCopies = 32;
  return static_cast<int>(std::clamp(
      std::floor(kPoolBytes / std::max(bytes, 1.0)), 1.0, double(kMostCopies)));
}

llvm::Expected<std::unique_ptr<Session>> Session::create(bool cuda) {
  std::unique_ptr<Session> session(new Session());
  if (metart_world_init() != METART_OK)
    return llvm::createStringError(
        llvm::formatv("cannot join the job: {0}",
                      metart_context_last_error(nullptr))
            .str());
  session->worldRank = metart_world_rank();
  session->worldSize = metart_world_size();
  metart_context_options options{};
  options.backend = cuda ? METART_BACKEND_CUDA : METART_BACKEND_CPU;
  // One GPU per rank, as `metac run` places them.
  options.device = cuda ? static_cast<int32_t>(metart_world_local_rank()) : 0;
  if (metart_context_create(&options, &session->ctx) != METART_OK)
    return llvm::createStringError(
        llvm::formatv("cannot create the runtime context: {0}",
                      metart_context_last_error(nullptr))
            .str());
  if (llvm::Error error = session->attach({session->worldSize, 1, 1, 1, 1}))
    return std::move(error);
  llvm::SmallVector<double> empty;
  for (int i = 0; i < 101; ++i) {
    double start = now();
    empty.push_back(now() - start);
  }
  session->clockSeconds = median(empty);
  DeviceTensor &scalar = session->scalar;
  scalar.shape = {1};
  scalar.tensor = {nullptr, METART_F64, 1, scalar.shape.data()};
  if (llvm::Error error =
          session->check(metart_buffer_alloc(session->ctx, sizeof(double),
                                             &scalar.tensor.data),
                         "metart_buffer_alloc"))
    return std::move(error);
  return session;
}

Session::~Session() {
  releaseTensors();
  if (scalar.tensor.data)
    metart_buffer_free(ctx, scalar.tensor.data);
  if (ctx)
    metart_context_destroy(ctx);
}

llvm::Error Session::attach(const std::array<int64_t, METART_NUM_AXES> &mesh) {
  return check(metart_comm_attach(ctx, mesh.data()), "metart_comm_attach");
}

llvm::Error Session::check(metart_status status, llvm::StringRef what) const {
  if (status == METART_OK)
    return llvm::Error::success();
  return llvm::createStringError(llvm::formatv("{0} failed on rank {1}: {2}",
                                               what, worldRank,
                                               metart_context_last_error(ctx))
                                     .str());
}

llvm::Expected<double> Session::maxOverRanks(double value) {
  if (llvm::Error error = check(metart_copy_to_device(ctx, scalar.tensor.data,
                                                      &value, sizeof(double)),
                                "metart_copy_to_device"))
    return std::move(error);
  if (llvm::Error error =
          check(metart_all_reduce(ctx, scalar.get(), scalar.get(), kWorld,
                                  METART_REDUCE_MAX),
                "metart_all_reduce"))
    return std::move(error);
  if (llvm::Error error = check(
          metart_copy_to_host(ctx, &value, scalar.tensor.data, sizeof(double)),
          "metart_copy_to_host"))
    return std::move(error);
  return value;
}

llvm::Expected<DeviceTensor &> Session::tensor(metart_dtype dtype,
                                               llvm::ArrayRef<int64_t> shape,
                                               double value) {
  DeviceTensor &t = tensors.emplace_back();
  t.shape.assign(shape.begin(), shape.end());
  t.tensor.dtype = dtype;
  t.tensor.rank = static_cast<int32_t>(shape.size());
  t.tensor.shape = t.shape.data();
  if (llvm::Error error =
          check(metart_buffer_alloc(ctx, static_cast<size_t>(t.bytes()),
                                    &t.tensor.data),
                "metart_buffer_alloc"))
    return std::move(error);
  if (llvm::Error error =
          check(metart_fill(ctx, t.get(), value), "metart_fill"))
    return std::move(error);
  return t;
}

llvm::Expected<DeviceTensor &>
Session::variedTensor(llvm::ArrayRef<int64_t> shape, bool rectified) {
  llvm::Expected<DeviceTensor &> t = tensor(METART_F32, shape, 0);
  if (!t)
    return t.takeError();
  std::vector<float> values(static_cast<size_t>(t->bytes() / sizeof(float)));
  // Each tensor its own sequence: a branch predictor must not learn the
  // data from one call to the next.
  uint64_t state = 0x9E3779B97F4A7C15ull * ++variedTensors;
  for (float &v : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = float(double(state >> 40) / double(1ull << 24) * 2.0 - 1.0);
    if (rectified)
      v = std::max(v, 0.0f);
  }
  if (llvm::Error error =
          check(metart_copy_to_device(ctx, t->tensor.data, values.data(),
                                      values.size() * 4),
                "metart_copy_to_device"))
    return std::move(error);
  return *t;
}

void Session::releaseTensors() {
  for (DeviceTensor &t : tensors)
    if (t.tensor.data)
      metart_buffer_free(ctx, t.tensor.data);
  tensors.clear();
}

llvm::Expected<double> Session::time(llvm::function_ref<metart_status()> call,
                                     llvm::StringRef what,
                                     SamplePolicy policy) {
  bool idle = worldRank >= activeRanks;
  // What the active ranks take per call, once the pilot has said.
  double expected = 0;
  auto timed = [&](int64_t calls) -> llvm::Expected<double> {
    if (idle) {
      // Asleep, not polling in a barrier: the cores are the active ranks'.
      if (!idleRanksPoll)
        std::this_thread::sleep_for(std::chrono::duration<double>(
            0.95 * double(calls) * (expected + policy.idleGap)));
      if (policy.untilAllDone)
        if (llvm::Error error =
                check(metart_barrier(ctx, kWorld), "metart_barrier"))
          return std::move(error);
      return 0.0;
    }
    double start = now(), alone = 0;
    for (int64_t i = 0; i < calls; ++i) {
      double begin = now();
      if (llvm::Error error = check(call(), what))
        return std::move(error);
      if (policy.idleGap <= 0)
        continue;
      // Timed alone, then the gap: the thread's own work, spinning so
      // that the caches keep what the call left there.
      double end = now();
      alone += std::max(0.0, end - begin - clockSeconds);
      while (now() - end < policy.idleGap) {
      }
    }
    if (llvm::Error error = check(metart_synchronize(ctx), what))
      return std::move(error);
    if (policy.untilAllDone)
      if (llvm::Error error =
              check(metart_barrier(ctx, kWorld), "metart_barrier"))
        return std::move(error);
    return (policy.idleGap > 0 ? alone : now() - start) / double(calls);
  };
  // Warm-up (first-touch pages, BLAS buffers, MPI connections), then a
  // pilot call whose slowest time sets the calls per sample on every rank.
  if (llvm::Error error = check(metart_barrier(ctx, kWorld), "metart_barrier"))
    return std::move(error);
  llvm::Expected<double> pilot = timed(1);
  if (pilot)
    pilot = timed(1);
  if (!pilot)
    return pilot.takeError();
  llvm::Expected<double> slowest = maxOverRanks(*pilot);
  if (!slowest)
    return slowest.takeError();
  expected = *slowest;
  int64_t calls = static_cast<int64_t>(
      std::clamp(std::ceil(policy.sampleSeconds /
                           std::max(*slowest + policy.idleGap, 1e-9)),
                 1.0, 1e5));
  llvm::SmallVector<double> samples;
  for (int s = 0; s < policy.samples; ++s) {
    if (llvm::Error error =
            check(metart_barrier(ctx, kWorld), "metart_barrier"))
      return std::move(error);
    llvm::Expected<double> seconds = timed(calls);
    if (!seconds)
      return seconds.takeError();
    samples.push_back(*seconds);
  }
  // The median, not the fastest: a program's time is a mean over its run,
  // slow moments of a shared host included, and the fastest sample of
  // every kernel predicted runs 20-25% short here.
  return median(samples);
}

llvm::Expected<double>
Session::slowestTime(llvm::function_ref<metart_status()> call,
                     llvm::StringRef what, SamplePolicy policy) {
  llvm::Expected<double> seconds = time(call, what, policy);
  if (!seconds)
    return seconds.takeError();
  return maxOverRanks(*seconds);
}

llvm::Expected<double> Session::slowestCompiledTime(
    metart_dtype dtype, llvm::ArrayRef<int64_t> shape,
    llvm::function_ref<metart_status(const metart_tensor *result)> kernel,
    llvm::StringRef what, SamplePolicy policy) {
  DeviceTensor result;
  result.shape.assign(shape.begin(), shape.end());
  result.tensor.dtype = dtype;
  result.tensor.rank = static_cast<int32_t>(shape.size());
  result.tensor.shape = result.shape.data();
  size_t bytes = static_cast<size_t>(result.bytes());
  auto call = [&]() -> metart_status {
    if (metart_status status =
            metart_scratch_alloc(ctx, bytes, &result.tensor.data))
      return status;
    metart_status status = kernel(result.get());
    metart_scratch_free(ctx, result.tensor.data, bytes);
    return status;
  };
  llvm::Expected<double> seconds = slowestTime(call, what, policy);
  metart_scratch_reset(ctx);
  return seconds;
}
