//===- Run.cpp - whole runs for metac run and compiled executables --------===//
//
// One path from a program description to printed results, shared by the
// JIT (`metac run`) and executables (`metac spec.meta -o prog`): create the
// context and task distributions, train, evaluate, print. A job of several
// ranks joins the world first and lays it out as the program's mesh; rank 0
// prints.
//
//===----------------------------------------------------------------------===//

#include "../Backend.h"
#include "../Context.h"
#include "../comm/Servers.h"
#include "metart/comm.h"
#include "metart/train.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// Destroys what a run created, whatever happened.
struct RunHandles {
  metart_context *context = nullptr;
  std::vector<metart_tasks *> tasks;
  ~RunHandles() {
    for (metart_tasks *t : tasks)
      metart_tasks_destroy(t);
    if (context)
      metart_context_destroy(context);
  }
};

/// Whether this process has a communicator over a mesh of several ranks:
/// from then on a failure of one rank must stop the others.
bool distributed = false;

/// The device of this rank: one GPU per process, by local rank.
int32_t deviceOfRank() {
#ifdef METART_HAVE_CUDA
  int count = metart::cudaDeviceCount();
  if (count > 0)
    return static_cast<int32_t>(metart_world_local_rank() % count);
#endif
  return 0;
}

/// Prints the time and bytes of collectives per axes mask.
/// One evaluation: the statistics of the tasks that stayed finite, the
/// median of all, and a line of its own when tasks diverged.
void printEvaluation(FILE *out, const char *lossName,
                     const metart_eval_result &r) {
  // Fixed point for the usual magnitudes, exponents past a million.
  auto number = [](double v) {
    char text[40];
    std::snprintf(text, sizeof(text), std::fabs(v) < 1e6 ? "%.4f" : "%.4g", v);
    return std::string(text);
  };
  std::fprintf(out, "evaluation after %lld step%s: ",
               static_cast<long long>(r.steps), r.steps == 1 ? "" : "s");
  if (r.diverged == r.count) {
    std::fprintf(out, "%s undefined: all %lld tasks diverged", lossName,
                 static_cast<long long>(r.count));
  } else {
    std::fprintf(out, "%s %s +- %s", lossName, number(r.mean).c_str(),
                 number(r.ci95).c_str());
    if (r.has_accuracy)
      std::fprintf(out, ", accuracy %.4f +- %.4f", r.accuracy, r.accuracy_ci95);
    std::fprintf(out, " (95%% CI, %lld tasks), median %s",
                 static_cast<long long>(r.count - r.diverged),
                 std::isfinite(r.median) ? number(r.median).c_str()
                                         : "diverged");
  }
  std::fprintf(out, "\n");
  if (r.diverged == 0)
    return;
  std::fprintf(out,
               "  %lld of %lld tasks diverged after %lld step%s (%lld with a "
               "non-finite loss",
               static_cast<long long>(r.diverged),
               static_cast<long long>(r.count), static_cast<long long>(r.steps),
               r.steps == 1 ? "" : "s", static_cast<long long>(r.nonfinite));
  if (r.diverge_above > 0)
    std::fprintf(out, ", %lld above %g",
                 static_cast<long long>(r.diverged - r.nonfinite),
                 r.diverge_above);
  std::fprintf(out, ")%s\n",
               r.diverged < r.count ? " and are left out of the mean" : "");
}

void printComm(FILE *out, const metart_train_result &result) {
  if (result.iterations_run <= 0)
    return;
  double seconds = 0, overlapped = 0;
  int64_t async = 0;
  std::string line;
  char entry[160];
  for (int mask = 1; mask < (1 << METART_NUM_AXES); ++mask) {
    const metart_comm_stats &s = result.comm[mask];
    if (!s.calls)
      continue;
    seconds += s.seconds;
    overlapped += s.overlapped_seconds;
    async += s.async_calls;
    std::snprintf(entry, sizeof(entry), "%s%s %.0f bytes/iteration",
                  line.empty() ? "" : ", ", metart_comm_axes_name(mask),
                  double(s.bytes) / result.iterations_run);
    line += entry;
  }
  if (!line.empty() && async > 0)
    std::fprintf(out,
                 "collectives: %.3f s in total, %.3f s of it (%.0f%%) "
                 "overlapped with compute; %s\n",
                 seconds, overlapped,
                 seconds > 0 ? 100 * overlapped / seconds : 0.0, line.c_str());
  else if (!line.empty())
    std::fprintf(out, "collectives: %.3f s in total; %s\n", seconds,
                 line.c_str());
}

/// The load balance of a run on several ranks: the busiest rank's compute
/// per meta-iteration against the mean.
void printBalance(FILE *out, const metart_train_result &result) {
  if (metart_world_size() < 2 || result.busy_seconds_mean <= 0)
    return;
  std::fprintf(out,
               "balance: the busiest rank computes %.3f ms/iteration, the "
               "mean %.3f: imbalance %.2f (max/mean)\n",
               result.busy_seconds_max * 1e3, result.busy_seconds_mean * 1e3,
               result.busy_seconds_max / result.busy_seconds_mean);
}

metart_status createTasks(const metart_tasks_spec &spec, uint64_t seed,
                          metart_tasks **out, char *error, size_t size) {
  metart_status status;
  switch (spec.kind) {
  case METART_TASKS_SINUSOID:
    status = metart_tasks_create_sinusoid(&spec.sinusoid, seed, out);
    break;
  case METART_TASKS_SEQUENCE:
    status = metart_tasks_create_sequence(&spec.sequence, seed, out);
    break;
  case METART_TASKS_FASHION_MNIST: {
    metart_fashion_mnist_config config = spec.fashion_mnist;
    config.path = spec.path;
    status = metart_tasks_create_fashion_mnist(&config, seed, out);
    break;
  }
  case METART_TASKS_IMAGE_FOLDER: {
    metart_image_folder_config config = spec.image_folder;
    config.path = spec.path;
    status = metart_tasks_create_image_folder(&config, seed, out);
    break;
  }
  default:
    status = metart_tasks_create_episodes(spec.path, out);
    break;
  }
  if (status)
    std::snprintf(error, size, "cannot create the task distribution: %s",
                  metart_tasks_last_error(*out));
  return status;
}

/// `R:ITERATION`, a rank and an iteration of at least 1.
bool parseHangRank(const char *text, int64_t &rank, int64_t &iteration) {
  char *end = nullptr;
  long long r = std::strtoll(text, &end, 10);
  if (end == text || *end != ':' || r < 0)
    return false;
  char *last = nullptr;
  long long i = std::strtoll(end + 1, &last, 10);
  if (last == end + 1 || *last || i < 1)
    return false;
  rank = r;
  iteration = i;
  return true;
}

} // namespace

extern "C" metart_status metart_run(const metart_program_desc *desc,
                                    const metart_run_options *options,
                                    void *outFile, char *error,
                                    size_t errorSize) {
  FILE *out = static_cast<FILE *>(outFile);
  RunHandles handles;
  if (metart_status s = metart_world_init()) {
    std::snprintf(error, errorSize, "cannot join the job: %s",
                  metart_context_last_error(nullptr));
    return s;
  }
  metart_context_options contextOptions{};
  bool cuda = options->backend ? std::strcmp(options->backend, "cuda") == 0
                               : metart_backend_available(METART_BACKEND_CUDA);
  contextOptions.backend = cuda ? METART_BACKEND_CUDA : METART_BACKEND_CPU;
  contextOptions.device = cuda ? deviceOfRank() : 0;
  contextOptions.memory_limit_bytes = options->memory_limit_bytes;
  if (metart_status s =
          metart_context_create(&contextOptions, &handles.context)) {
    std::snprintf(error, errorSize, "cannot create the runtime context: %s",
                  metart_context_last_error(nullptr));
    return s;
  }
  distributed = metart_world_size() > 1;
  // Parameter servers: ranks beyond the mesh's, which serve and return.
  if (desc->servers.count > 0) {
    // Asynchronous servers never stand at an iteration whose state a
    // checkpoint could hold.
    int64_t every = options->train.checkpoint_every > 0
                        ? options->train.checkpoint_every
                        : desc->checkpoint_every;
    bool writes =
        (options->train.checkpoint_dir || desc->checkpoint_dir) && every > 0;
    if ((writes || options->train.resume_dir) && desc->servers.asynchronous) {
      std::snprintf(error, errorSize,
                    "checkpoints with asynchronous parameter servers are not "
                    "supported: no iteration holds a consistent state");
      return METART_ERROR_UNSUPPORTED;
    }
    int64_t workers = 1;
    for (int axis = 0; axis < METART_NUM_AXES; ++axis)
      workers *= desc->mesh[axis] > 0 ? desc->mesh[axis] : 1;
    int64_t iterations = options->train.iterations >= 0
                             ? options->train.iterations
                             : desc->iterations;
    std::string why;
    if (metart_status s = metart::comm::servers::join(
            workers, desc->servers, desc->params, desc->num_params, iterations,
            writes ? every : 0,
            options->train.checkpoint_dir || desc->checkpoint_dir, why)) {
      std::snprintf(error, errorSize, "cannot lay out the job: %s",
                    why.c_str());
      return s;
    }
    if (metart::comm::servers::isServer()) {
      if (metart_status s = metart::comm::servers::serve(why)) {
        std::snprintf(error, errorSize, "%s", why.c_str());
        return s;
      }
      return METART_OK;
    }
  }
  // Before anything runs: a mesh that does not match the job is an error.
  if (metart_status s = metart_comm_attach(handles.context, desc->mesh)) {
    std::snprintf(error, errorSize, "cannot lay out the job: %s",
                  metart_context_last_error(handles.context));
    return s;
  }
  distributed = metart_world_size() > 1;
  uint64_t seed =
      options->seed >= 0 ? static_cast<uint64_t>(options->seed) : desc->seed;
  // Pipeline stages run different programs: this rank's is the one of its
  // pipeline coordinate (row-major: the axes after it vary faster).
  int64_t stages = desc->mesh[METART_AXIS_PIPELINE] > 1
                       ? desc->mesh[METART_AXIS_PIPELINE]
                       : 1;
  int64_t inner = 1;
  for (int axis = METART_AXIS_PIPELINE + 1; axis < METART_NUM_AXES; ++axis)
    inner *= desc->mesh[axis] > 1 ? desc->mesh[axis] : 1;
  int64_t stage = metart_world_rank() / inner % stages;
  metart_program program{};
  program.name = desc->name;
  program.step = desc->step_stages ? desc->step_stages[stage] : desc->step;
  program.params = desc->params;
  program.num_params = desc->num_params;
  program.state_per_param = desc->state_per_param;
  program.step_counter = desc->step_counter;
  program.meta_batch = desc->meta_batch;
  program.iterations = desc->iterations;
  program.seed = seed;
  program.loss_name = desc->loss_name;
  for (int axis = 0; axis < METART_NUM_AXES; ++axis)
    program.mesh[axis] = desc->mesh[axis];
  program.guarded = desc->guarded;
  program.flops_per_iteration = desc->flops_per_iteration;
  program.on_nonfinite = desc->on_nonfinite;
  program.loss_scaling = desc->loss_scaling;
  program.zero_parts = desc->zero_parts;
  program.zero_mask = desc->zero_mask;
  program.zero_sharded = desc->zero_sharded;
  program.servers = desc->servers;
  program.offload_optimizer = desc->offload_optimizer;
  program.offload_params = desc->offload_params;
  program.pipeline_fill = desc->pipeline_fill;
  handles.tasks.push_back(nullptr);
  if (metart_status s = createTasks(desc->tasks, seed, &handles.tasks.back(),
                                    error, errorSize))
    return s;
  program.tasks = handles.tasks.back();
  // A mixed meta-batch: one distribution per class, of the class's sizes.
  std::vector<metart_tasks *> classDistributions;
  for (int64_t c = 0; c < desc->num_task_classes; ++c) {
    metart_tasks_spec spec = desc->tasks;
    if (spec.kind == METART_TASKS_SINUSOID) {
      spec.sinusoid.support = desc->class_support[c];
      spec.sinusoid.query = desc->class_query[c];
    } else if (spec.kind == METART_TASKS_SEQUENCE) {
      spec.sequence.support = desc->class_support[c];
      spec.sequence.query = desc->class_query[c];
    } else if (spec.kind == METART_TASKS_FASHION_MNIST) {
      // Sizes in samples: shots and queries per class times the ways.
      spec.fashion_mnist.shots =
          desc->class_support[c] / spec.fashion_mnist.ways;
      spec.fashion_mnist.query = desc->class_query[c] / spec.fashion_mnist.ways;
    } else if (spec.kind == METART_TASKS_IMAGE_FOLDER) {
      spec.image_folder.shots = desc->class_support[c] / spec.image_folder.ways;
      spec.image_folder.query = desc->class_query[c] / spec.image_folder.ways;
    } else {
      std::snprintf(error, errorSize,
                    "a mixed meta-batch draws sinusoid, sequence, "
                    "fashion_mnist or image_folder tasks");
      return METART_ERROR_INVALID_ARGUMENT;
    }
    handles.tasks.push_back(nullptr);
    if (metart_status s =
            createTasks(spec, seed, &handles.tasks.back(), error, errorSize))
      return s;
    classDistributions.push_back(handles.tasks.back());
  }
  program.num_task_classes = desc->num_task_classes;
  program.class_distributions = classDistributions.data();
  program.class_tasks = desc->class_tasks;
  program.step_groups = desc->step_groups;
  program.num_step_groups = desc->num_step_groups;
  program.task_assignment = desc->task_assignment;
  std::vector<metart_eval_spec> evals;
  for (int64_t i = 0; i < desc->num_evals; ++i) {
    const metart_eval_desc &e = desc->evals[i];
    handles.tasks.push_back(nullptr);
    if (metart_status s =
            createTasks(e.tasks, seed, &handles.tasks.back(), error, errorSize))
      return s;
    evals.push_back(
        {e.steps, e.stage_functions ? e.stage_functions[stage] : e.function,
         handles.tasks.back(), e.count, e.accuracy, e.diverge_above});
  }
  program.evals = evals.data();
  program.num_evals = evals.size();

  metart_train_options train = options->train;
  if (train.checkpoint_every <= 0)
    train.checkpoint_every = desc->checkpoint_every;
  if (!train.checkpoint_dir)
    train.checkpoint_dir = desc->checkpoint_dir;
  metart_train_result result{};
  if (metart_status s = metart_train(handles.context, &program, &train, &result,
                                     error, errorSize))
    return s;
  if (metart_world_rank() != 0)
    return METART_OK;
  double perIteration = result.seconds_per_iteration;
  std::fprintf(out,
               "%s: %lld meta-iterations on %s%s, final meta-loss %.6g, %.3f "
               "ms/iteration, %.0f tasks/s, peak device memory %zu bytes, "
               "peak host memory %zu bytes",
               desc->name, static_cast<long long>(result.iterations_run),
               cuda ? "cuda" : "cpu",
               result.replayed_iterations > 0 ? " (CUDA graph)" : "",
               result.final_loss, perIteration * 1e3,
               perIteration > 0 ? desc->meta_batch / perIteration : 0.0,
               result.peak_device_bytes, result.peak_host_bytes);
  // The cost model's FLOPs of the step and the rate they were done at.
  if (desc->flops_per_iteration > 0 && perIteration > 0)
    std::fprintf(out, ", %.0f FLOPs per meta-iteration (%.3f GFLOP/s)",
                 desc->flops_per_iteration,
                 desc->flops_per_iteration / perIteration / 1e9);
  std::fprintf(out, "\n");
  printComm(out, result);
  printBalance(out, result);
  // Overflows of a scaled loss are reported with the scale, below.
  int64_t nonfinite = result.skipped_iterations - result.overflow_iterations;
  if (nonfinite > 0)
    std::fprintf(out,
                 "skipped %lld meta-iteration%s with a non-finite meta-loss "
                 "or outer gradient (their updates were dropped)\n",
                 static_cast<long long>(nonfinite), nonfinite == 1 ? "" : "s");
  if (desc->loss_scaling)
    std::fprintf(out,
                 "loss scale %g at the end; %lld meta-iteration%s skipped "
                 "for an overflowing gradient (the scale halved each time)\n",
                 result.loss_scale,
                 static_cast<long long>(result.overflow_iterations),
                 result.overflow_iterations == 1 ? "" : "s");
  if (options->train.profile)
    std::fputs(metart::formatProfile(handles.context->profile).c_str(), out);
  for (int64_t i = 0; i < result.num_evals; ++i)
    printEvaluation(out, desc->loss_name, result.evals[i]);
  std::fflush(out);
  return METART_OK;
}

namespace {

const char *kUsage =
    "usage: %s [options]\n"
    "  --iterations=N          meta-iterations (default: the program's)\n"
    "  --seed=S                random seed (default: the program's)\n"
    "  --init-params=FILE      start from these parameters (safetensors)\n"
    "  --init-params-partial   the file may lack some parameters: they keep\n"
    "                          their initialisation (a pretrained body)\n"
    "  --save-params=FILE      write the trained parameters\n"
    "  --checkpoint-every=N    checkpoint every N meta-iterations\n"
    "  --checkpoint-dir=DIR    directory of the checkpoint\n"
    "  --checkpoint-format=gathered|sharded  one file of whole tensors\n"
    "                          (rank 0) or every rank's pieces and an index\n"
    "                          (default: sharded when ZeRO shards the state)\n"
    "  --resume=DIR            resume from DIR's checkpoint (either format)\n"
    "  --metrics=FILE          per-iteration metrics (JSON lines)\n"
    "  --backend=cpu|cuda      default: cuda when a GPU is present\n"
    "  --memory-limit=BYTES    cap on the runtime's device memory\n"
    "  --quiet                 no progress output\n"
    "  --comm-timeout=SECONDS  a blocking collective that makes no progress\n"
    "                          this long ends the run (default:\n"
    "                          METART_COMM_TIMEOUT, else 50)\n"
    "  --hang-rank=R:ITERATION  rank R stops for good before that\n"
    "                          meta-iteration (a hang, for tests)\n"
    "  --slow-rank=R:FACTOR[:PERIOD]  rank R takes FACTOR times as long per\n"
    "                          meta-iteration (a straggler, for tests)\n"
    "  --profile               time each runtime call (kernels, copies,\n"
    "                          collectives) and print the totals\n"
    "  --trace=FILE            write a timeline of the meta-iterations'\n"
    "                          runtime calls (Chrome trace JSON: Perfetto)\n"
    "  --no-cuda-graph         run each meta-iteration op by op (default on\n"
    "                          cuda: replay one recorded as a CUDA graph)\n"
    "  --on-nonfinite=stop|skip  a non-finite meta-loss or outer gradient\n"
    "                          stops the run or skips the update (default:\n"
    "                          the program's, else stop)\n"
    "  --max-consecutive-skips=N  under skip, stop after N in a row (20)\n"
    "  --diverge-above=X       an evaluation task whose loss is above X has\n"
    "                          diverged (default: the program's)\n";

/// Parses a non-negative integer, or fails.
bool parseCount(const char *text, int64_t &out) {
  char *end = nullptr;
  long long v = std::strtoll(text, &end, 10);
  if (!*text || *end || v < 0)
    return false;
  out = v;
  return true;
}

/// Parses a finite number > 0, or fails.
bool parsePositive(const char *text, double &out) {
  char *end = nullptr;
  double v = std::strtod(text, &end);
  if (!*text || *end || !(v > 0) || std::isinf(v))
    return false;
  out = v;
  return true;
}

/// `R:FACTOR`: a world rank and a factor above 1.
bool parseSlowRank(const char *text, int64_t &rank, double &factor,
                   int64_t &period) {
  char *end = nullptr;
  long long r = std::strtoll(text, &end, 10);
  if (end == text || *end != ':' || r < 0)
    return false;
  std::string rest = end + 1;
  long long p = 0;
  if (size_t colon = rest.find(':'); colon != std::string::npos) {
    char *periodEnd = nullptr;
    p = std::strtoll(rest.c_str() + colon + 1, &periodEnd, 10);
    if (periodEnd == rest.c_str() + colon + 1 || *periodEnd || p < 1)
      return false;
    rest.resize(colon);
  }
  double f = 0;
  if (!parsePositive(rest.c_str(), f) || !(f > 1))
    return false;
  rank = r;
  factor = f;
  period = p;
  return true;
}

} // namespace

extern "C" int metart_main(int argc, char **argv,
                           const metart_program_desc *program) {
  metart_run_options options{};
  options.train.iterations = -1;
  options.train.progress = 2;
  options.seed = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t eq = arg.find('=');
    std::string key = arg.substr(0, eq);
    const char *value = eq == std::string::npos ? "" : argv[i] + eq + 1;
    // `--option value` as well as `--option=value`, as metac takes them.
    bool flag = key == "--quiet" || key == "--profile" ||
                key == "--init-params-partial" || key == "--no-cuda-graph" ||
                key == "--help" || key == "-h";
    if (eq == std::string::npos && !flag && i + 1 < argc)
      value = argv[++i];
    int64_t number = 0;
    double real = 0;
    if (key == "--help" || key == "-h") {
      std::printf(kUsage, argv[0]);
      return 0;
    }
    if (key == "--quiet") {
      options.train.progress = 0;
    } else if (key == "--profile") {
      options.train.profile = 1;
    } else if (key == "--init-params-partial") {
      options.train.init_params_partial = 1;
    } else if (key == "--no-cuda-graph") {
      options.train.no_graph = 1;
    } else if (key == "--iterations" && parseCount(value, number)) {
      options.train.iterations = number;
    } else if (key == "--seed" && parseCount(value, number)) {
      options.seed = number;
    } else if (key == "--checkpoint-every" && parseCount(value, number)) {
      options.train.checkpoint_every = number;
    } else if (key == "--memory-limit" && parseCount(value, number)) {
      options.memory_limit_bytes = static_cast<size_t>(number);
    } else if (key == "--trace" && *value) {
      options.train.trace_path = value;
    } else if (key == "--init-params" && *value) {
      options.train.init_params = value;
    } else if (key == "--save-params" && *value) {
      options.train.save_params = value;
    } else if (key == "--checkpoint-dir" && *value) {
      options.train.checkpoint_dir = value;
    } else if (key == "--checkpoint-format" &&
               std::strcmp(value, "gathered") == 0) {
      options.train.checkpoint_format = METART_CHECKPOINT_GATHERED;
    } else if (key == "--checkpoint-format" &&
               std::strcmp(value, "sharded") == 0) {
      options.train.checkpoint_format = METART_CHECKPOINT_SHARDED;
    } else if (key == "--resume" && *value) {
      options.train.resume_dir = value;
    } else if (key == "--metrics" && *value) {
      options.train.metrics_path = value;
    } else if (key == "--on-nonfinite" && std::strcmp(value, "stop") == 0) {
      options.train.on_nonfinite = METART_NONFINITE_STOP;
    } else if (key == "--on-nonfinite" && std::strcmp(value, "skip") == 0) {
      options.train.on_nonfinite = METART_NONFINITE_SKIP;
    } else if (key == "--max-consecutive-skips" && parseCount(value, number) &&
               number > 0) {
      options.train.max_consecutive_skips = number;
    } else if (key == "--diverge-above" && parsePositive(value, real)) {
      options.train.diverge_above = real;
    } else if (key == "--slow-rank" &&
               parseSlowRank(value, options.train.slow_rank,
                             options.train.slow_factor,
                             options.train.slow_period)) {
    } else if (key == "--comm-timeout" && parsePositive(value, real)) {
      options.train.comm_timeout_seconds = real;
    } else if (key == "--hang-rank" &&
               parseHangRank(value, options.train.hang_rank,
                             options.train.hang_iteration)) {
    } else if (key == "--backend" && (std::strcmp(value, "cpu") == 0 ||
                                      std::strcmp(value, "cuda") == 0)) {
      options.backend = value;
    } else {
      std::fprintf(stderr, "%s: error: bad argument '%s'\n", argv[0], argv[i]);
      std::fprintf(stderr, kUsage, argv[0]);
      return 2;
    }
  }
  if (options.train.checkpoint_every > 0 && !options.train.checkpoint_dir) {
    std::fprintf(stderr,
                 "%s: error: --checkpoint-every needs "
                 "--checkpoint-dir\n",
                 argv[0]);
    return 2;
  }
  char error[1024] = "";
  if (metart_status status =
          metart_run(program, &options, stdout, error, sizeof(error))) {
    // Preempted: every rank wrote the checkpoint and stops here, with the
    // code of the signal that asked.
    if (status == METART_PREEMPTED) {
      if (metart_world_rank() == 0)
        std::fprintf(stderr, "%s: %s\n", argv[0], error);
      metart_world_finalize();
      return 128 + metart_preemption_signal();
    }
    if (metart_world_size() > 1)
      std::fprintf(stderr, "%s: rank %lld: error: %s\n", argv[0],
                   static_cast<long long>(metart_world_rank()), error);
    else
      std::fprintf(stderr, "%s: error: %s\n", argv[0], error);
    // The others may wait for this rank in a collective: stop them all
    // (a non-finite stop is agreed: every rank ends here by itself).
    if (distributed &&
        (status != METART_ERROR_NONFINITE || metart::comm::servers::active()))
      metart_world_abort(1);
    metart_world_finalize();
    return 1;
  }
  metart_world_finalize();
  return 0;
}
