//===- Train.cpp - the meta-training driver -------------------------------===//
//
// Owns everything around the compiled step and evaluation functions:
// parameters (initialised as PyTorch does, or read from a file), optimizer
// state, the iteration loop with task sampling, metrics, progress,
// checkpoints written atomically (Checkpoint.cpp), resumption, and
// evaluation as mean and 95% confidence interval over the evaluation tasks.
// With a mesh, each rank trains on its slice of every meta-batch
// (Sharding.h) and rank 0 alone prints and writes files.
//
//===----------------------------------------------------------------------===//

#include "../Context.h"
#include "../Preemption.h"
#include "../comm/Communicator.h"
#include "../comm/Servers.h"
#include "../comm/Trace.h"
#include "../comm/Watchdog.h"
#include "../io/AtomicFile.h"
#include "Evaluation.h"
#include "StepRunner.h"
#include "Trainer.h"
#include "metart/comm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace metart::train {

metart_status Trainer::fail(metart_status status, const char *format, ...) {
  va_list args;
  va_start(args, format);
  if (error && errorSize)
    std::vsnprintf(error, errorSize, format, args);
  va_end(args);
  return status;
}

metart_status Trainer::trainingPeak(size_t &peak) {
  metart_memory_stats stats;
  metart_memory_stats_get(context, &stats);
  // The largest over the ranks (pipeline stages differ).
  double bytes = static_cast<double>(stats.peak_bytes);
  if (metart_status s = reduceOverRanks(bytes, METART_REDUCE_MAX))
    return s;
  peak = static_cast<size_t>(bytes);
  return METART_OK;
}

metart_status Trainer::reduceOverRanks(double &value, int32_t op) {
  if (metart_world_size() == 1)
    return METART_OK;
  // An all-reduce of one double over every axis.
  DeviceTensor t;
  if (metart_status s = allocate(t, {1}, METART_F64))
    return s;
  metart_status s =
      metart_copy_to_device(context, t.descriptor.data, &value, 8);
  if (!s)
    s = metart_all_reduce(context, &t.descriptor, &t.descriptor,
                          METART_ALL_AXES, op);
  if (!s)
    s = metart_copy_to_host(context, &value, t.descriptor.data, 8);
  metart_buffer_free(context, t.descriptor.data);
  if (s)
    return fail(s, "agreeing on the ranks' figures: %s",
                metart_context_last_error(context));
  return METART_OK;
}

metart_status Trainer::allocate(DeviceTensor &t, std::vector<int64_t> shape,
                                int32_t dtype, bool host) {
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.bytes = t.numElements() * elementSize(dtype);
  void *data = nullptr;
  if (metart_status s = host ? metart_host_buffer_alloc(context, t.bytes, &data)
                             : metart_buffer_alloc(context, t.bytes, &data))
    return fail(s, "allocating %zu bytes%s: %s", t.bytes,
                host ? " of host memory" : "",
                metart_context_last_error(context));
  t.descriptor = {data, dtype, static_cast<int32_t>(t.shape.size()),
                  t.shape.data()};
  return METART_OK;
}

metart_status Trainer::initialize() {
  for (int64_t i = 0; i < program.num_params; ++i) {
    const metart_param_spec &p = program.params[i];
    std::vector<int64_t> shape(p.shape, p.shape + p.rank);
    if (p.parts < 0 || (p.parts > 1 && p.part_mask <= 0))
      return fail(METART_ERROR_INVALID_ARGUMENT,
                  "parameter '%s' is kept in %lld parts over axes %d: not a "
                  "part count and a set of mesh axes",
                  p.name, static_cast<long long>(p.parts), p.part_mask);
    if (p.parts > 1) {
      if (p.part_dim < 0 || p.part_dim >= p.rank ||
          shape[p.part_dim] % p.parts != 0)
        return fail(METART_ERROR_INVALID_ARGUMENT,
                    "parameter '%s' is kept in %lld parts of its dimension "
                    "%d, which it does not have or which they do not divide",
                    p.name, static_cast<long long>(p.parts), p.part_dim);
      shape[p.part_dim] /= p.parts;
    }
    if (p.staged) {
      int64_t stages = std::max<int64_t>(program.mesh[METART_AXIS_PIPELINE], 1);
      if (p.stage < 0 || p.stage >= stages)
        return fail(METART_ERROR_INVALID_ARGUMENT,
                    "parameter '%s' is held by pipeline stage %d, which a "
                    "mesh of %lld stages does not have",
                    p.name, p.stage, static_cast<long long>(stages));
      // The other stages take an empty tensor in its place.
      if (p.stage != sharding.pipelineCoord)
        shape = {0};
    }
    params.emplace_back();
    if (metart_status s = allocate(params.back(), shape, p.dtype,
                                   program.offload_params != 0))
      return s;
  }
  // With parameter servers the step takes no state: the servers keep it,
  // and the first worker holds a copy in host memory for checkpoints.
  bool serversHoldState = program.servers.count > 0;
  bool keepState =
      !serversHoldState ||
      (sharding.writer && (options.checkpoint_dir || options.resume_dir));
  bool hostState = program.offload_optimizer || serversHoldState;
  for (int32_t k = 0; k < (keepState ? program.state_per_param : 0); ++k)
    for (int64_t i = 0; i < program.num_params; ++i) {
      state.emplace_back();
      // A parameter kept in parts keeps its state in the same parts.
      std::vector<int64_t> shape = params[i].shape;
      size_t t = program.num_params + state.size() - 1;
      if (isPart(t) && program.params[i].parts <= 1)
        shape = {partElements(t)};
      if (metart_status s =
              allocate(state.back(), shape, params[i].dtype, hostState))
        return s;
    }
  if (program.step_counter && keepState) {
    state.emplace_back();
    if (metart_status s =
            allocate(state.back(), {}, METART_I64, serversHoldState))
      return s;
  }
  for (DeviceTensor &t : state) {
    std::vector<char> zeros(t.bytes, 0);
    if (metart_status s = metart_copy_to_device(context, t.descriptor.data,
                                                zeros.data(), t.bytes))
      return fail(s, "%s", metart_context_last_error(context));
  }
  int32_t lossType = params.empty() ? METART_F32 : params[0].dtype;
  if (program.loss_scaling) {
    if (!program.guarded)
      return fail(METART_ERROR_INVALID_ARGUMENT,
                  "the program scales its loss but has no update guard to "
                  "adjust the scale by");
    if (metart_status s = allocate(scaleInput, {}, lossType))
      return s;
    if (metart_status s = writeScale())
      return s;
  }
  if (!program.guarded) {
    if (metart_status s = allocate(loss, {}, lossType))
      return s;
  } else {
    // A guarded step's loss goes next to its gradient norms: the driver
    // reads both with one copy.
    std::string healthError;
    if (metart_status s = health.allocate(context, program.num_params,
                                          metart_world_size() > 1, healthError))
      return fail(s, "%s", healthError.c_str());
    loss.shape = {};
    loss.dtype = lossType;
    loss.bytes = elementSize(lossType);
    loss.descriptor = {health.lossSlot(), lossType, 0, loss.shape.data()};
  }
  if (metart_status s = assignShares())
    return s;
  return allocateBatch(shares, batch, hostBatch, localBatch);
}

metart_status Trainer::assignShares() {
  shares.clear();
  step = program.step;
  if (program.num_task_classes == 0) {
    shares.push_back({program.tasks, sharding.firstTask(program.meta_batch),
                      sharding.localTasks(program.meta_batch)});
    return METART_OK;
  }
  const int64_t *row = program.task_assignment +
                       sharding.taskCoord * (1 + 2 * program.num_task_classes);
  if (row[0] < 0 || row[0] >= program.num_step_groups)
    return fail(METART_ERROR_INVALID_ARGUMENT,
                "task rank %lld has no step among the %lld groups",
                static_cast<long long>(sharding.taskCoord),
                static_cast<long long>(program.num_step_groups));
  step = program.step_groups[row[0]];
  for (int64_t c = 0, offset = 0; c < program.num_task_classes;
       offset += program.class_tasks[c++]) {
    int64_t first = row[1 + 2 * c], count = row[2 + 2 * c];
    if (count > 0)
      shares.push_back({program.class_distributions[c], offset + first, count});
  }
  return METART_OK;
}

metart_status Trainer::initializeParams() {
  std::mt19937_64 rng(program.seed);
  for (int64_t i = 0; i < program.num_params; ++i) {
    const metart_param_spec &p = program.params[i];
    DeviceTensor &t = params[i];
    std::vector<double> values(wholeOf(i).numElements());
    double bound =
        1.0 / std::sqrt(static_cast<double>(p.fan_in > 0 ? p.fan_in : 1));
    std::uniform_real_distribution<double> uniform(-bound, bound);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (double &v : values) {
      switch (p.init) {
      case METART_INIT_ONES:
        v = 1;
        break;
      case METART_INIT_ZEROS:
        v = 0;
        break;
      case METART_INIT_NORMAL:
        v = normal(rng);
        break;
      case METART_INIT_CONSTANT:
        v = p.value;
        break;
      default:
        v = uniform(rng);
        break;
      }
    }
    // Every rank draws the whole (the same numbers as one process) and
    // keeps its part.
    std::vector<std::pair<int64_t, int64_t>> ranges;
    if (metart_status s = partRanges(i, ranges))
      return s;
    std::vector<char> host(t.bytes);
    int64_t at = 0;
    for (auto [first, count] : ranges)
      for (int64_t e = first; e < first + count; ++e, ++at) {
        if (t.dtype == METART_F32)
          reinterpret_cast<float *>(host.data())[at] =
              static_cast<float>(values[e]);
        else
          reinterpret_cast<double *>(host.data())[at] = values[e];
      }
    if (metart_status s = metart_copy_to_device(context, t.descriptor.data,
                                                host.data(), t.bytes))
      return fail(s, "%s", metart_context_last_error(context));
  }
  return METART_OK;
}

metart_status Trainer::barrier() {
  if (metart_status s = metart_barrier(context, METART_ALL_AXES))
    return fail(s, "%s", metart_context_last_error(context));
  return METART_OK;
}

metart_status Trainer::evaluate(const metart_eval_spec &spec,
                                metart_eval_result &result) {
  std::vector<DeviceTensor> evalBatch;
  std::vector<std::vector<char>> evalHost, evalLocal;
  std::vector<TaskShare> evalShares = {
      {spec.tasks, sharding.firstTask(program.meta_batch),
       sharding.localTasks(program.meta_batch)}};
  if (metart_status s =
          allocateBatch(evalShares, evalBatch, evalHost, evalLocal))
    return s;
  DeviceTensor losses, accuracies;
  if (metart_status s = allocate(losses, {program.meta_batch}, loss.dtype))
    return s;
  if (spec.accuracy)
    if (metart_status s =
            allocate(accuracies, {program.meta_batch}, loss.dtype))
      return s;
  std::vector<metart_tensor *> inputs;
  for (DeviceTensor &p : params)
    inputs.push_back(&p.descriptor);
  for (DeviceTensor &b : evalBatch)
    inputs.push_back(&b.descriptor);
  metart_tensor *outputs[] = {&losses.descriptor, &accuracies.descriptor};
  std::vector<double> values, hits;
  std::vector<char> host(losses.bytes);
  auto read = [&](const DeviceTensor &t, std::vector<double> &into) {
    metart_copy_to_host(context, host.data(), t.descriptor.data, t.bytes);
    for (int64_t i = 0; i < program.meta_batch &&
                        static_cast<int64_t>(into.size()) < spec.count;
         ++i)
      into.push_back(loss.dtype == METART_F32
                         ? reinterpret_cast<float *>(host.data())[i]
                         : reinterpret_cast<double *>(host.data())[i]);
  };
  for (int64_t draw = 0; static_cast<int64_t>(values.size()) < spec.count;
       ++draw) {
    // Evaluation tasks are consecutive indices of one draw, so they are
    // distinct (fixed episodes: episode i mod N).
    if (metart_status s = drawBatch(evalShares, METART_SPLIT_EVAL, 0,
                                    draw * program.meta_batch, evalBatch,
                                    evalHost, evalLocal))
      return s;
    if (int32_t s = spec.function(context, inputs.data(), outputs))
      return fail(static_cast<metart_status>(s), "evaluation failed: %s",
                  metart_context_last_error(context));
    if (spec.accuracy)
      read(accuracies, hits);
    read(losses, values);
  }
  double threshold =
      options.diverge_above > 0 ? options.diverge_above : spec.diverge_above;
  result = metart::train::summarizeEvaluation(
      spec.steps, values, spec.accuracy ? &hits : nullptr, threshold);
  if (spec.accuracy)
    metart_buffer_free(context, accuracies.descriptor.data);
  metart_buffer_free(context, losses.descriptor.data);
  for (DeviceTensor &t : evalBatch)
    metart_buffer_free(context, t.descriptor.data);
  return METART_OK;
}

void Trainer::progress(int64_t iteration, int64_t total, double value,
                       double secondsPerIteration) {
  if (options.progress == 0 || !sharding.writer)
    return;
  double eta = secondsPerIteration * (total - iteration);
  if (options.progress == 2 && isatty(fileno(stderr))) {
    // Redraw at most ten times a second: a terminal is slower than a step.
    auto now = std::chrono::steady_clock::now();
    if (iteration != total && now - lastDraw < std::chrono::milliseconds(100))
      return;
    lastDraw = now;
    const int width = 30;
    int filled =
        static_cast<int>(width * iteration / std::max<int64_t>(total, 1));
    std::fprintf(
        stderr, "\r[%.*s%*s] %lld/%lld  loss %.5g  %.2f ms/it  ETA %.0fs ",
        filled, "==============================", width - filled, "",
        static_cast<long long>(iteration), static_cast<long long>(total), value,
        secondsPerIteration * 1e3, eta);
    if (iteration == total)
      std::fprintf(stderr, "\n");
    return;
  }
  int64_t every = std::max<int64_t>(total / 20, 1);
  if (iteration % every == 0 || iteration == total)
    std::fprintf(
        stderr, "iteration %lld/%lld  loss %.6g  %.3f ms/it  ETA %.0fs\n",
        static_cast<long long>(iteration), static_cast<long long>(total), value,
        secondsPerIteration * 1e3, eta);
}

int32_t Trainer::policy() const {
  if (options.on_nonfinite != METART_NONFINITE_PROGRAM)
    return options.on_nonfinite;
  return program.on_nonfinite == METART_NONFINITE_SKIP ? METART_NONFINITE_SKIP
                                                       : METART_NONFINITE_STOP;
}

metart_status Trainer::stopNonfinite(int64_t iteration, double lossValue,
                                     const char *why) {
  // The first culprit: a parameter (from a file, or an earlier update), else
  // a gradient of this meta-iteration.
  std::string culprit;
  for (int64_t i = 0; i < program.num_params && culprit.empty(); ++i) {
    const DeviceTensor &p = params[i];
    std::vector<char> host(p.bytes);
    metart_copy_to_host(context, host.data(), p.descriptor.data, p.bytes);
    for (int64_t e = 0; e < p.numElements(); ++e) {
      double v = p.dtype == METART_F32
                     ? reinterpret_cast<const float *>(host.data())[e]
                     : reinterpret_cast<const double *>(host.data())[e];
      if (!std::isfinite(v)) {
        culprit = std::string("parameter '") + program.params[i].name +
                  "' holds a non-finite value";
        break;
      }
    }
  }
  int64_t gradient = health.firstNonfiniteGradient();
  if (culprit.empty() && gradient >= 0)
    culprit = std::string("the outer gradient of '") +
              program.params[gradient].name + "' is not finite";
  if (culprit.empty())
    culprit = std::isfinite(lossValue)
                  ? "another rank's meta-loss or gradient is not finite"
                  : "every outer gradient is finite";
  std::string checkpoint =
      lastCheckpointIteration >= 0
          ? "the last checkpoint ('" + lastCheckpoint + "', iteration " +
                std::to_string(lastCheckpointIteration) +
                ") is intact: --resume=" + lastCheckpointDir +
                " continues from it"
          : std::string("no checkpoint was written");
  char lossText[32];
  if (std::isnan(lossValue))
    std::snprintf(lossText, sizeof(lossText), "NaN");
  else
    std::snprintf(lossText, sizeof(lossText), "%g", lossValue);
  return fail(METART_ERROR_NONFINITE,
              "non-finite meta-iteration %lld: %s (meta-loss %s; %s); its "
              "update was not applied and training stopped; %s "
              "(--on-nonfinite=skip drops such updates and goes on)",
              static_cast<long long>(iteration), why, lossText, culprit.c_str(),
              checkpoint.c_str());
}

metart_status Trainer::run(metart_train_result &result) {
  std::memset(&result, 0, sizeof(result));
  std::string layoutError;
  if (metart_status s = sharding.layOut(context, program, layoutError))
    return fail(s, "%s", layoutError.c_str());
  if (metart_status s = initialize())
    return s;
  int64_t start = 0;
  if (options.resume_dir) {
    auto began = std::chrono::steady_clock::now();
    if (metart_status s = resume(options.resume_dir, &start))
      return s;
    resumeSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began)
            .count();
    lastCheckpointDir = options.resume_dir;
    lastCheckpointIteration = start;
  } else if (options.init_params && options.init_params_partial) {
    // The parameters the file lacks keep their initialisation.
    std::vector<std::string> missing;
    if (metart_status s = initializeParams())
      return s;
    if (metart_status s =
            loadParams(options.init_params, false, nullptr, &missing))
      return s;
    if (!missing.empty() && sharding.writer) {
      std::string names;
      for (const std::string &name : missing)
        names += (names.empty() ? "" : ", ") + name;
      std::fprintf(stderr,
                   "metart: %lld of %lld parameters from '%s'; initialised: "
                   "%s\n",
                   static_cast<long long>(program.num_params - missing.size()),
                   static_cast<long long>(program.num_params),
                   options.init_params, names.c_str());
    }
  } else if (options.init_params) {
    if (metart_status s = loadParams(options.init_params, false, nullptr))
      return s;
  } else if (metart_status s = initializeParams()) {
    return s;
  }

  if (program.servers.count > 0 &&
      ((options.checkpoint_dir && options.checkpoint_every > 0) ||
       options.resume_dir)) {
    if (program.servers.asynchronous)
      return fail(METART_ERROR_UNSUPPORTED,
                  "checkpoints with asynchronous parameter servers are not "
                  "supported: no iteration holds a consistent state");
    if (options.checkpoint_dir && shardedCheckpoints())
      return fail(METART_ERROR_UNSUPPORTED,
                  "parameter servers write gathered checkpoints (the first "
                  "worker collects their slices): use "
                  "--checkpoint-format=gathered");
  }
  // The servers start from the run's first iteration and, resumed, from
  // the checkpoint's optimizer state (the first worker sends it).
  if (program.servers.count > 0) {
    std::vector<const metart_tensor *> pointers;
    for (const DeviceTensor &t : state)
      pointers.push_back(&t.descriptor);
    std::string why;
    if (metart_status s = comm::servers::prepare(
            context, start,
            options.resume_dir && !pointers.empty() ? pointers.data() : nullptr,
            options.resume_dir ? static_cast<int64_t>(pointers.size()) : 0,
            why))
      return fail(s, "%s", why.c_str());
  }
  // The checkpoint directory is made up front, so a bad path fails before
  // any training time is spent.
  if (options.checkpoint_dir && sharding.writer) {
    std::error_code ec;
    std::filesystem::create_directories(options.checkpoint_dir, ec);
    if (ec)
      return fail(METART_ERROR_IO,
                  "cannot create checkpoint directory '%s': %s",
                  options.checkpoint_dir, ec.message().c_str());
  }

  FILE *metrics = nullptr;
  if (options.metrics_path && sharding.writer) {
    metrics = std::fopen(options.metrics_path, options.resume_dir ? "a" : "w");
    if (!metrics)
      return fail(METART_ERROR_IO, "cannot open metrics file '%s': %s",
                  options.metrics_path, std::strerror(errno));
  }

  std::vector<metart_tensor *> inputs, outputs;
  for (DeviceTensor &p : params)
    inputs.push_back(&p.descriptor);
  if (program.servers.count == 0)
    for (DeviceTensor &s : state)
      inputs.push_back(&s.descriptor);
  outputs = inputs; // new parameters and state replace the old in place
  if (program.loss_scaling)
    inputs.push_back(&scaleInput.descriptor);
  for (DeviceTensor &b : batch)
    inputs.push_back(&b.descriptor);
  outputs.push_back(&loss.descriptor);
  if (program.guarded)
    outputs.push_back(health.normsOutput());
  result.guarded = program.guarded;
  int64_t maxSkips =
      options.max_consecutive_skips > 0 ? options.max_consecutive_skips : 20;
  int64_t consecutiveSkips = 0;
  double healthyLoss = 0;

  int64_t total =
      options.iterations >= 0 ? options.iterations : program.iterations;
  // Profiling times each call, and collectives keep per-call statistics:
  // both need the calls, not a replay.
  metart::train::StepRunner runner(context, step,
                                   !options.no_graph && !options.profile &&
                                       !options.trace_path &&
                                       metart_world_size() == 1);
  context->timeline.enable(options.trace_path != nullptr);
  double elapsed = 0, lossValue = 0, busy = 0;
  int64_t timed = 0;
  metart_status status = METART_OK;
  std::chrono::steady_clock::duration lastStep{}, fastestStep{};
  // With somewhere to write a checkpoint, SIGTERM and SIGINT stop after the
  // meta-iteration in flight (Preempt.cpp); under MPI the watchdog owns
  // SIGTERM and asks for the stop.
  struct Armed {
    explicit Armed(bool on) : on(on) {
      if (on)
        preemption::arm(!comm::watchdog::running());
    }
    ~Armed() {
      if (on)
        preemption::disarm();
    }
    bool on;
  } armed(options.checkpoint_dir != nullptr &&
          !(program.servers.count > 0 && program.servers.asynchronous));
  if (options.comm_timeout_seconds > 0)
    comm::watchdog::setTimeout(options.comm_timeout_seconds);
  if (armed.on && metart_world_size() > 1)
    if ((status = allocate(preemptFlag, {1}, METART_F64)))
      return status;
  for (int64_t it = start; it < total; ++it) {
    // The profile covers the timed iterations (after the first).
    context->profile.enable(options.profile && it > start);
    auto begin = std::chrono::steady_clock::now();
    metart_comm_stats_reset(context);
    if ((status = drawBatch(shares, METART_SPLIT_TRAIN, it, 0, batch, hostBatch,
                            localBatch)))
      break;
    // A straggler computes slower: it starts its step late by (factor - 1)
    // times its last step, so the others wait in the step's collectives.
    int64_t slowRank =
        options.slow_period > 0
            ? (options.slow_rank + (it - start) / options.slow_period) %
                  (metart_world_size() - program.servers.count)
            : options.slow_rank;
    if (options.slow_factor > 1 && metart_world_rank() == slowRank &&
        fastestStep.count() > 0)
      std::this_thread::sleep_for(fastestStep * (options.slow_factor - 1));
    comm::watchdog::setIteration(it + 1);
    // A hung rank (for tests): the others' collectives time out. Under
    // NCCL a kernel spins on the stream instead, so that this rank's own
    // collectives hang too and the host goes on into the step; a mesh of
    // more than one rank runs op by op (no graph), so the spin comes
    // before the step's first collective.
    if (options.hang_iteration == it + 1 &&
        metart_world_rank() == options.hang_rank) {
      bool onDevice = context->comm && context->comm->transport &&
                      !context->comm->transport->hangDevice().failed();
      std::fprintf(stderr,
                   "metart: rank %lld: hanging before meta-iteration %lld "
                   "(--hang-rank)%s\n",
                   static_cast<long long>(metart_world_rank()),
                   static_cast<long long>(it + 1),
                   onDevice ? ": a kernel spins before its collectives" : "");
      std::fflush(stderr);
      while (!onDevice)
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    auto stepBegin = std::chrono::steady_clock::now();
    std::string stepError;
    metart_status stepStatus =
        runner.run(inputs.data(), outputs.data(), stepError);
    auto stepEnd = std::chrono::steady_clock::now();
    lastStep = stepEnd - stepBegin;
    // Its own work: waiting for a straggler lengthens a step, never
    // shortens it.
    if (fastestStep.count() == 0 || lastStep < fastestStep)
      fastestStep = lastStep;
    metart::trace::record("step", 0, 0, stepBegin, stepEnd);
    if (stepStatus) {
      status = fail(stepStatus, "meta-iteration %lld failed: %s",
                    static_cast<long long>(it), stepError.c_str());
      break;
    }
    // The step's collectives, before the verdict's all-reduce (which is
    // the driver's, not the program's).
    metart_comm_stats comm[1 << METART_NUM_AXES];
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      metart_comm_stats_get(context, mask, &comm[mask]);
      result.comm[mask].calls += comm[mask].calls;
      result.comm[mask].bytes += comm[mask].bytes;
      result.comm[mask].seconds += comm[mask].seconds;
      result.comm[mask].async_calls += comm[mask].async_calls;
      result.comm[mask].overlapped_seconds += comm[mask].overlapped_seconds;
    }
    if (it > start) {
      double waited = 0;
      for (int mask = 1; mask < (1 << METART_NUM_AXES); ++mask)
        waited += comm[mask].seconds;
      busy += std::chrono::duration<double>(lastStep).count() - waited;
    }
    // schedule = pipedream: the first call after a start or a resume only
    // fills the pipeline (the program gates its update off); its meta-loss
    // belongs to no meta-iteration, so it is neither judged nor reported.
    bool filling = program.pipeline_fill && it == start;
    bool healthy = true, overflow = false;
    if (filling) {
      lossValue = std::numeric_limits<double>::quiet_NaN();
    } else if (program.guarded) {
      std::string healthError;
      if ((status = health.check(loss.dtype, lossValue, healthy, overflow,
                                 healthError))) {
        status = fail(status, "%s", healthError.c_str());
        break;
      }
    } else {
      double host[1] = {0};
      float hostF = 0;
      metart_copy_to_host(
          context, loss.dtype == METART_F32 ? (void *)&hostF : (void *)host,
          loss.descriptor.data, loss.bytes);
      lossValue = loss.dtype == METART_F32 ? hostF : host[0];
    }
    // With a scaled loss, a finite meta-loss with a non-finite gradient is
    // the scale's overflow: skipped whatever the policy, the scale halved.
    bool overflowed = program.loss_scaling && !healthy && overflow;
    double scaleUsed = scaler.scale();
    if (program.loss_scaling && (healthy || overflowed) &&
        scaler.update(overflowed) && (status = writeScale()))
      break;
    if (overflowed)
      ++result.overflow_iterations;
    if (!healthy && !overflowed && policy() == METART_NONFINITE_STOP) {
      status = stopNonfinite(it + 1, lossValue,
                             "the meta-loss or the outer gradient is not "
                             "finite");
      break;
    }
    if (!healthy) {
      ++result.skipped_iterations;
      if (++consecutiveSkips >= maxSkips) {
        std::string why = "the last " + std::to_string(consecutiveSkips) +
                          " meta-iterations were skipped "
                          "(--max-consecutive-skips)";
        if (program.loss_scaling)
          why += "; the loss scale went down to " +
                 metart::train::jsonNumber(scaler.scale());
        status = stopNonfinite(it + 1, lossValue, why.c_str());
        break;
      }
      if (result.skipped_iterations == 1 && !overflowed && options.progress &&
          sharding.writer)
        std::fprintf(stderr,
                     "metart: note: meta-iteration %lld had a non-finite "
                     "meta-loss or outer gradient; its update was skipped "
                     "(the count is reported at the end)\n",
                     static_cast<long long>(it + 1));
    } else if (!filling) {
      consecutiveSkips = 0;
      healthyLoss = lossValue;
    }
    auto end = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(end - begin).count();
    if (context->timeline.enabled())
      context->timeline.iteration(it, begin, end);
    if (it > start) { // the first iteration warms caches
      elapsed += seconds;
      ++timed;
    }
    double perIteration = timed ? elapsed / timed : seconds;
    metart_memory_stats stats;
    metart_memory_stats_get(context, &stats);
    if (metrics) {
      std::string extra;
      if (program.flops_per_iteration > 0)
        extra +=
            ", \"flops\": " +
            metart::train::jsonNumber(program.flops_per_iteration) +
            ", \"flops_per_second\": " +
            metart::train::jsonNumber(program.flops_per_iteration / seconds);
      if (program.guarded)
        extra +=
            ", \"grad_norm\": " + metart::train::jsonNumber(health.gradNorm()) +
            ", \"skipped\": " + (healthy ? "false" : "true");
      if (filling)
        extra += ", \"filling\": true";
      if (program.loss_scaling)
        extra += ", \"loss_scale\": " + metart::train::jsonNumber(scaleUsed) +
                 ", \"overflow\": " + (overflowed ? "true" : "false");
      std::fprintf(metrics,
                   "{\"iteration\": %lld, \"meta_loss\": %s, \"seconds\": "
                   "%.9g, \"tasks_per_second\": %.6g, \"peak_device_bytes\": "
                   "%zu, \"peak_host_bytes\": %zu, \"comm\": %s%s}\n",
                   static_cast<long long>(it + 1),
                   metart::train::jsonNumber(lossValue).c_str(), seconds,
                   program.meta_batch / seconds, stats.peak_bytes,
                   peakHostBytes(), metart::train::commJson(comm).c_str(),
                   extra.c_str());
      std::fflush(metrics);
    }
    if (!filling)
      progress(it + 1, total, healthy ? lossValue : healthyLoss, perIteration);
    if (options.checkpoint_dir && options.checkpoint_every > 0 &&
        (it + 1) % options.checkpoint_every == 0) {
      if ((status = saveCheckpoint(it + 1)))
        break;
    }
    result.iterations_run = it + 1 - start;
    if (armed.on) {
      int signal = 0;
      if ((status = agreePreemption(signal)))
        break;
      if (signal) {
        status = stopPreempted(it + 1, signal);
        break;
      }
    }
  }
  comm::watchdog::setIteration(0);
  // Past the loop a signal no longer waits for the end of a meta-iteration:
  // one that came after the last agreement ends the process as it would
  // have without preemption.
  if (armed.on) {
    armed.on = false;
    preemption::disarm();
    if (int late = preemption::requested(); late && status == METART_OK) {
      std::signal(late, SIG_DFL);
      std::raise(late);
    }
  }
  // Evaluation calls other functions on the same memory.
  runner.discard();
  result.replayed_iterations = runner.replays();
  if (!runner.fallback().empty() && options.progress)
    std::fprintf(stderr,
                 "metart: note: the meta-iterations ran op by op, not as a "
                 "CUDA graph: %s\n",
                 runner.fallback().c_str());
  context->profile.enable(false);
  context->profile.setSpan(timed, elapsed);
  context->timeline.enable(false);
  if (options.trace_path) {
    std::string path = metart::timelinePath(
        options.trace_path, metart_world_rank(), metart_world_size());
    std::string text = context->timeline.json(metart_world_rank());
    std::string error;
    if (!metart::io::writeFileAtomically(path, {{text.data(), text.size()}},
                                         error))
      return fail(METART_ERROR_IO, "cannot write the trace: %s", error.c_str());
    if (context->timeline.truncated() && options.progress)
      std::fprintf(stderr,
                   "metart: warning: the trace %s holds the first %zu "
                   "runtime calls only\n",
                   path.c_str(), context->timeline.size());
  }
  if (status) {
    if (metrics)
      std::fclose(metrics);
    return status;
  }
  // With parameter servers every rank ends on the servers' last
  // parameters, the same everywhere, whatever each pulled last.
  if (program.servers.count > 0) {
    std::vector<const metart_tensor *> pointers;
    for (const DeviceTensor &p : params)
      pointers.push_back(&p.descriptor);
    std::string why;
    double last = 0;
    if (metart_status s = comm::servers::finish(
            context, pointers.data(), static_cast<int64_t>(pointers.size()),
            &last, why)) {
      if (metrics)
        std::fclose(metrics);
      return fail(s, "collecting the servers' parameters: %s", why.c_str());
    }
    if (metrics)
      std::fprintf(metrics,
                   "{\"parameter_servers\": {\"count\": %lld, "
                   "\"staleness\": %s, \"largest_lag\": %lld}}\n",
                   static_cast<long long>(program.servers.count),
                   program.servers.asynchronous
                       ? "\"inf\""
                       : std::to_string(program.servers.staleness).c_str(),
                   static_cast<long long>(comm::servers::largestLag()));
  }
  result.final_loss = program.guarded ? healthyLoss : lossValue;
  result.seconds_per_iteration = timed ? elapsed / timed : 0;
  // The load balance over the ranks: the busiest's compute against the
  // mean.
  result.busy_seconds_max = result.busy_seconds_mean = timed ? busy / timed : 0;
  metart_status agreed = trainingPeak(result.peak_train_device_bytes);
  if (!agreed)
    agreed = reduceOverRanks(result.busy_seconds_max, METART_REDUCE_MAX);
  if (!agreed &&
      !(agreed = reduceOverRanks(result.busy_seconds_mean, METART_REDUCE_SUM)))
    result.busy_seconds_mean /= metart_world_size();
  if (agreed) {
    if (metrics)
      std::fclose(metrics);
    return agreed;
  }
  if (metrics && metart_world_size() > 1 && result.busy_seconds_mean > 0)
    std::fprintf(metrics,
                 "{\"balance\": {\"busy_max_seconds\": %.9g, "
                 "\"busy_mean_seconds\": %.9g, \"imbalance\": %.6g}}\n",
                 result.busy_seconds_max, result.busy_seconds_mean,
                 result.busy_seconds_max / result.busy_seconds_mean);
  if (metrics) {
    metart_memory_stats held;
    metart_memory_stats_get(context, &held);
    std::fprintf(metrics, "{\"peak_train_device_bytes\": %zu",
                 result.peak_train_device_bytes);
    if (program.offload_optimizer || program.offload_params)
      std::fprintf(metrics, ", \"offloaded_host_bytes\": %zu",
                   held.host_buffer_bytes);
    std::fprintf(metrics, "}\n");
  }
  if (metrics && (checkpointWrites > 0 || options.resume_dir))
    std::fprintf(metrics,
                 "{\"checkpoints\": {\"format\": \"%s\", \"writes\": %lld, "
                 "\"write_seconds\": %.6f, \"resume_seconds\": %.6f}}\n",
                 shardedCheckpoints() ? "sharded" : "gathered",
                 static_cast<long long>(checkpointWrites), checkpointSeconds,
                 resumeSeconds);
  result.loss_scale = program.loss_scaling ? scaler.scale() : 0;
  if (metrics && program.guarded)
    std::fprintf(
        metrics, "{\"nonfinite\": {\"policy\": \"%s\", \"skipped\": %lld%s}}\n",
        policy() == METART_NONFINITE_SKIP ? "skip" : "stop",
        static_cast<long long>(result.skipped_iterations),
        program.loss_scaling
            ? (", \"overflow\": " + std::to_string(result.overflow_iterations) +
               ", \"loss_scale\": " + metart::train::jsonNumber(scaler.scale()))
                  .c_str()
            : "");
  if (metrics && options.profile)
    std::fprintf(metrics, "{\"profile\": %s, \"iterations\": %lld}\n",
                 metart::profileJson(context->profile).c_str(),
                 static_cast<long long>(timed));
  if (options.save_params) {
    // Every rank takes part in gathering the parameters held in parts; the
    // writer writes.
    if (metart_status s = saveParams(options.save_params, false, total))
      return s;
    if (metart_status s = barrier())
      return s;
  }
  for (int64_t e = 0; e < program.num_evals && e < 16; ++e) {
    if (metart_status s = evaluate(program.evals[e], result.evals[e])) {
      if (metrics)
        std::fclose(metrics);
      return s;
    }
    ++result.num_evals;
    if (metrics)
      metart::train::writeEvaluationJson(metrics, result.evals[e]);
  }
  if (metrics)
    std::fclose(metrics);
  metart_memory_stats stats;
  metart_memory_stats_get(context, &stats);
  result.peak_device_bytes = stats.peak_bytes;
  result.peak_host_bytes = peakHostBytes();
  return METART_OK;
}

} // namespace metart::train

extern "C" metart_status metart_train(metart_context *context,
                                      const metart_program *program,
                                      const metart_train_options *options,
                                      metart_train_result *out_result,
                                      char *error, size_t error_size) {
  if (!context || !program || !options || !out_result || !program->step ||
      !program->tasks)
    return METART_ERROR_INVALID_ARGUMENT;
  metart::train::Trainer trainer(context, *program, *options, error,
                                 error_size);
  return trainer.run(*out_result);
}
