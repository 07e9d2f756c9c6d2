//===- TrainTest.cpp - the trainer on a mesh
//-------------------------------===//
//
// A hand-written step (no compiler) checks what the trainer hands each
// rank: local shapes [T / Dtask, N / Ddata, ...] holding exactly this
// rank's slice of the batch a single process would draw; it all-reduces
// the batch's sum over task+data as its loss, which must then be the
// single-process sum. Runs on a 2x2 (task x data) mesh under mpirun -np 4
// and on one rank without a launcher.
//
//===----------------------------------------------------------------------===//

#include "metart/train.h"
#include "Harness.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace metart::test;

namespace {

constexpr int64_t kTasks = 4, kSupport = 10, kQuery = 6;

metart_sinusoid_config sinusoid() {
  metart_sinusoid_config config = {};
  config.amplitude[0] = 0.1;
  config.amplitude[1] = 5;
  config.phase[1] = 3.14;
  config.input[0] = -5;
  config.input[1] = 5;
  config.support = kSupport;
  config.query = kQuery;
  config.dtype = METART_F64;
  return config;
}

Mesh meshOfWorld() {
  return metart_world_size() == 4 ? Mesh{2, 2, 1, 1, 1, 1}
                                  : Mesh{1, 1, 1, 1, 1, 1};
}

/// What the step saw.
struct Observed {
  metart_tasks *reference = nullptr; // the same distribution, for checks
  int64_t iteration = 0;
  int mismatches = 0;
  std::vector<double> globalSums; // per iteration, single-process reference
} observed;

/// The sum of everything in a single-process draw of iteration `it`.
double referenceSum(metart_split split, int64_t it, int64_t first,
                    std::vector<std::vector<double>> &full) {
  full.assign(4, {});
  for (int i = 0; i < 4; ++i)
    full[i].resize(kTasks * (i < 2 ? kSupport : kQuery));
  metart_tasks_draw(observed.reference, split, it, first, kTasks,
                    full[0].data(), full[1].data(), full[2].data(),
                    full[3].data());
  double sum = 0;
  for (const auto &buffer : full)
    for (double v : buffer)
      sum += v;
  return sum;
}

int32_t step(metart_context *c, metart_tensor *const *in,
             metart_tensor *const *out) {
  Mesh mesh = meshOfWorld();
  int64_t coords[4];
  metart_comm_mesh(c, nullptr, coords);
  std::vector<std::vector<double>> full;
  double expected =
      referenceSum(METART_SPLIT_TRAIN, observed.iteration++, 0, full);
  double local = 0;
  int64_t tasks = kTasks / mesh[0];
  for (int i = 0; i < 4; ++i) {
    const metart_tensor &b = *in[1 + i];
    int64_t samples = (i < 2 ? kSupport : kQuery) / mesh[1];
    if (b.rank != 3 || b.shape[0] != tasks || b.shape[1] != samples ||
        b.shape[2] != 1) {
      ++observed.mismatches;
      continue;
    }
    const double *data = static_cast<const double *>(b.data);
    for (int64_t t = 0; t < tasks; ++t)
      for (int64_t s = 0; s < samples; ++s) {
        int64_t globalTask = coords[0] * tasks + t;
        int64_t globalSample = coords[1] * samples + s;
        double want = full[i][globalTask * samples * mesh[1] + globalSample];
        if (data[t * samples + s] != want)
          ++observed.mismatches;
        local += data[t * samples + s];
      }
  }
  double *loss = static_cast<double *>(out[1]->data);
  *loss = local;
  if (int32_t s =
          metart_all_reduce(c, out[1], out[1], 1 | 2, METART_REDUCE_SUM))
    return s;
  observed.globalSums.push_back(expected);
  static_cast<double *>(out[0]->data)[0] =
      static_cast<const double *>(in[0]->data)[0] + 1;
  return METART_OK;
}

/// Evaluation: the losses of all T tasks (each task's support inputs'
/// sum), gathered by the function as compiled code would.
int32_t evaluate(metart_context *c, metart_tensor *const *in,
                 metart_tensor *const *out) {
  Mesh mesh = meshOfWorld();
  const metart_tensor &x = *in[1];
  int64_t tasks = x.shape[0], samples = x.shape[1];
  std::vector<double> sums(tasks, 0.0);
  for (int64_t t = 0; t < tasks; ++t)
    for (int64_t s = 0; s < samples; ++s)
      sums[t] += static_cast<const double *>(x.data)[t * samples + s];
  int64_t shape[1] = {tasks};
  metart_tensor local = {sums.data(), METART_F64, 1, shape};
  if (int32_t s = metart_all_reduce(c, &local, &local, 2, METART_REDUCE_SUM))
    return s;
  (void)mesh;
  return metart_all_gather(c, &local, out[0], 1, 0);
}

TEST(TrainOnMesh, EachRankGetsItsSliceOfTheSingleProcessBatch) {
  metart_sinusoid_config config = sinusoid();
  metart_tasks *tasks = nullptr, *evalTasks = nullptr;
  ASSERT_EQ(metart_tasks_create_sinusoid(&config, 7, &tasks), METART_OK);
  ASSERT_EQ(metart_tasks_create_sinusoid(&config, 7, &evalTasks), METART_OK);
  ASSERT_EQ(metart_tasks_create_sinusoid(&config, 7, &observed.reference),
            METART_OK);
  int64_t shape[1] = {1};
  metart_param_spec param = {"w", METART_F64, 1, shape, METART_INIT_ZEROS,
                             1,   0.0};
  metart_eval_spec eval = {1, evaluate, evalTasks, 8, 0};
  metart_program program = {};
  program.name = "sharding";
  program.step = step;
  program.params = &param;
  program.num_params = 1;
  program.tasks = tasks;
  program.meta_batch = kTasks;
  program.iterations = 3;
  program.seed = 7;
  program.loss_name = "sum";
  program.evals = &eval;
  program.num_evals = 1;
  Mesh mesh = meshOfWorld();
  for (int axis = 0; axis < METART_NUM_AXES; ++axis)
    program.mesh[axis] = mesh[axis];

  std::string dir = "train-test-" + std::to_string(metart_world_size());
  std::string metrics = dir + "-metrics.jsonl";
  metart_train_options options = {};
  options.iterations = -1;
  options.metrics_path = metrics.c_str();
  options.checkpoint_dir = ".";
  options.checkpoint_every = 2;
  std::string saved = dir + "-params.safetensors";
  options.save_params = saved.c_str();

  Context c;
  metart_train_result result;
  char error[512] = "";
  ASSERT_EQ(metart_train(c, &program, &options, &result, error, sizeof(error)),
            METART_OK)
      << error;
  EXPECT_EQ(observed.mismatches, 0);
  ASSERT_EQ(observed.globalSums.size(), 3u);
  EXPECT_NEAR(result.final_loss, observed.globalSums.back(), 1e-9);
  EXPECT_EQ(result.iterations_run, 3);
  // One all_reduce of 8 bytes over task+data per iteration.
  EXPECT_EQ(result.comm[3].calls, 3);
  EXPECT_EQ(result.comm[3].bytes, metart_world_size() > 1 ? 24 : 0);

  // Evaluation: the mean over 8 tasks (two draws of 4) of each task's
  // support-input sum, as one process would compute it.
  std::vector<std::vector<double>> full;
  double mean = 0;
  for (int64_t draw = 0; draw < 2; ++draw) {
    referenceSum(METART_SPLIT_EVAL, 0, draw * kTasks, full);
    for (double v : full[0])
      mean += v;
  }
  mean /= 8;
  ASSERT_EQ(result.num_evals, 1);
  EXPECT_NEAR(result.evals[0].mean, mean, 1e-9);

  // The checkpoint and the parameters are complete when train returns on
  // any rank; rank 0 alone wrote the metrics, with one line per iteration
  // and the counters of the task+data axes.
  metart_safetensors *file = nullptr;
  char message[256] = "";
  EXPECT_EQ(metart_safetensors_open("./checkpoint.safetensors", &file, message,
                                    sizeof(message)),
            METART_OK)
      << message;
  metart_safetensors_close(file);
  EXPECT_EQ(
      metart_safetensors_open(saved.c_str(), &file, message, sizeof(message)),
      METART_OK)
      << message;
  metart_safetensors_close(file);
  if (metart_world_rank() == 0) {
    std::ifstream in(metrics);
    std::string line;
    int lines = 0, evaluations = 0, peaks = 0, balances = 0;
    while (std::getline(in, line)) {
      // The evaluation after training has a line of its own, and so has
      // the largest rank's peak memory of the meta-iterations.
      if (line.rfind("{\"evaluation\": ", 0) == 0) {
        ++evaluations;
        continue;
      }
      if (line.rfind("{\"peak_train_device_bytes\": ", 0) == 0) {
        ++peaks;
        continue;
      }
      // The checkpoints' summary (format, writes, their time).
      if (line.rfind("{\"checkpoints\": ", 0) == 0)
        continue;
      // Several ranks: the busiest rank's compute against the mean.
      if (line.rfind("{\"balance\": {\"busy_max_seconds\": ", 0) == 0) {
        ++balances;
        continue;
      }
      ++lines;
      std::string bytes = metart_world_size() > 1 ? "8" : "0";
      EXPECT_NE(line.find("\"comm\": {\"task+data\": {\"bytes\": " + bytes +
                          ", \"seconds\": "),
                std::string::npos)
          << line;
      EXPECT_NE(line.find("\"calls\": 1}}"), std::string::npos) << line;
    }
    EXPECT_EQ(lines, 3);
    EXPECT_EQ(evaluations, 1);
    EXPECT_EQ(peaks, 1);
    EXPECT_EQ(balances, metart_world_size() > 1 ? 1 : 0);
  }
  metart_tasks_destroy(tasks);
  metart_tasks_destroy(evalTasks);
  metart_tasks_destroy(observed.reference);
}

TEST(TrainOnMesh, RunRejectsAMeshThatDoesNotMatchTheJob) {
  metart_program_desc desc = {};
  desc.name = "mismatch";
  desc.step = step;
  desc.tasks.kind = METART_TASKS_SINUSOID;
  desc.tasks.sinusoid = sinusoid();
  desc.meta_batch = kTasks;
  desc.loss_name = "sum";
  desc.mesh[0] = 2 * metart_world_size();
  metart_run_options options = {};
  options.train.iterations = 1;
  options.seed = -1;
  options.backend = "cpu";
  char error[512] = "";
  EXPECT_EQ(metart_run(&desc, &options, stdout, error, sizeof(error)),
            METART_ERROR_INVALID_ARGUMENT);
  std::string n = std::to_string(metart_world_size());
  std::string twice = std::to_string(2 * metart_world_size());
  EXPECT_NE(
      std::string(error).find(
          "mesh task=" + twice +
          " x data=1 x tensor=1 x pipeline=1 x expert=1 x sequence=1 has " +
          twice + " ranks but the job has " + n),
      std::string::npos)
      << error;
}

/// The error of a one-parameter program with `param` on the world's mesh,
/// which must be refused as an invalid argument.
std::string refusal(const metart_param_spec &param, metart_tasks *tasks) {
  Mesh mesh = meshOfWorld();
  metart_program program = {};
  program.name = "refused";
  program.step = step;
  program.params = &param;
  program.num_params = 1;
  program.tasks = tasks;
  program.meta_batch = kTasks;
  program.iterations = 1;
  program.loss_name = "sum";
  for (int axis = 0; axis < METART_NUM_AXES; ++axis)
    program.mesh[axis] = mesh[axis];
  metart_train_options options = {};
  options.iterations = -1;
  Context c;
  metart_train_result result;
  char error[512] = "";
  EXPECT_EQ(metart_train(c, &program, &options, &result, error, sizeof(error)),
            METART_ERROR_INVALID_ARGUMENT);
  return std::string(error);
}

// A parameter held in parts (metart_param_spec.parts) must name a part
// count, mesh axes whose group has that many ranks, and a dimension it
// divides; otherwise the run ends before it starts, naming the parameter.
TEST(TrainOnMesh, PartsThatDoNotFitTheParameterOrTheMeshAreErrors) {
  metart_sinusoid_config config = sinusoid();
  metart_tasks *tasks = nullptr;
  ASSERT_EQ(metart_tasks_create_sinusoid(&config, 7, &tasks), METART_OK);
  auto trainWith = [&](int64_t extent, int64_t parts, int32_t mask,
                       int32_t dim) {
    int64_t shape[1] = {extent};
    metart_param_spec param = {"w", METART_F64, 1,     shape, METART_INIT_ZEROS,
                               1,   0.0,        parts, mask,  dim};
    return refusal(param, tasks);
  };
  constexpr int32_t kExpertAxis = 1 << METART_AXIS_EXPERT;
  std::string negative = trainWith(2, -1, kExpertAxis, 0);
  EXPECT_NE(negative.find("parameter 'w' is kept in -1 parts"),
            std::string::npos)
      << negative;
  std::string indivisible = trainWith(3, 2, kExpertAxis, 0);
  EXPECT_NE(indivisible.find("parameter 'w' is kept in 2 parts of its "
                             "dimension 0, which it does not have or which "
                             "they do not divide"),
            std::string::npos)
      << indivisible;
  std::string noDimension = trainWith(2, 2, kExpertAxis, 1);
  EXPECT_NE(noDimension.find("of its dimension 1, which it does not have"),
            std::string::npos)
      << noDimension;
  // The mesh has no expert axis: its group is one rank, not two.
  std::string group = trainWith(2, 2, kExpertAxis, 0);
  EXPECT_NE(group.find("'w' is held in 2 parts, but the group of its axes "
                       "has 1 ranks"),
            std::string::npos)
      << group;
  metart_tasks_destroy(tasks);
}

// A parameter one pipeline stage holds (metart_param_spec.staged) must name
// a stage of the mesh.
TEST(TrainOnMesh, StagesOutsideThePipelineAreErrors) {
  metart_sinusoid_config config = sinusoid();
  metart_tasks *tasks = nullptr;
  ASSERT_EQ(metart_tasks_create_sinusoid(&config, 7, &tasks), METART_OK);
  auto trainWith = [&](int32_t stage) {
    int64_t shape[1] = {2};
    metart_param_spec param = {"w", METART_F64, 1, shape, METART_INIT_ZEROS,
                               1,   0.0,        0, 0,     0,
                               1,   stage};
    return refusal(param, tasks);
  };
  // The mesh has no pipeline axis: its one stage is stage 0.
  std::string beyond = trainWith(1);
  EXPECT_NE(beyond.find("parameter 'w' is held by pipeline stage 1, which a "
                        "mesh of 1 stages does not have"),
            std::string::npos)
      << beyond;
  std::string negative = trainWith(-1);
  EXPECT_NE(negative.find("held by pipeline stage -1"), std::string::npos)
      << negative;
  metart_tasks_destroy(tasks);
}

} // namespace
