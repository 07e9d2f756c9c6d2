/*===- train.h - the meta-training driver ---------------------------------===*
 *
 * Compiled code is one meta-iteration (`step`) and evaluation functions;
 * the driver owns everything around them: parameter initialisation and
 * files, the iteration loop, task sampling, checkpoints, metrics, progress
 * and evaluation. Part of the metart C API (see metart.h).
 *
 *===----------------------------------------------------------------------===*/

#ifndef METART_TRAIN_H
#define METART_TRAIN_H

#include "metart/comm.h"
#include "metart/data.h"
#include "metart/metart.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A compiled function: descriptors of its arguments and of its results
 *  (preallocated by the caller; a result may alias an argument). Returns a
 *  metart_status. */
typedef int32_t (*metart_function)(metart_context *context,
                                   metart_tensor *const *inputs,
                                   metart_tensor *const *outputs);

typedef enum metart_init {
  /** U(-1/sqrt(fan_in), 1/sqrt(fan_in)): PyTorch's default for linear and
   *  convolution weights and biases. */
  METART_INIT_UNIFORM_FAN_IN = 0,
  METART_INIT_ONES = 1,
  METART_INIT_ZEROS = 2,
  /** N(0, 1): PyTorch's default for embeddings. */
  METART_INIT_NORMAL = 3,
  /** Every element `value` (Meta-SGD's learned rates start at inner_lr). */
  METART_INIT_CONSTANT = 4,
} metart_init;

typedef struct metart_param_spec {
  const char *name; /* PyTorch state_dict name, e.g. "fc1.weight" */
  int32_t dtype;
  int32_t rank;
  const int64_t *shape;
  int32_t init; /* metart_init */
  int64_t fan_in;
  double value; /* METART_INIT_CONSTANT's */
  /** > 1: the parameter is kept split between steps (an expert's weights,
   *  a tensor-parallel weight's heads or columns): each rank of the group of
   *  the axes in `part_mask` holds part r of `parts` equal parts of
   *  dimension `part_dim` (r: its position in the group), and so does its
   *  optimizer state. The step and evaluation functions take that part;
   *  initialisation, files and checkpoints see the whole (`shape`). 0 or 1:
   *  every rank holds it whole. */
  int64_t parts;
  int32_t part_mask;
  int32_t part_dim;
  /** Under pipeline stages, 1: only the ranks of pipeline stage `stage`
   *  hold the parameter and its optimizer state (the other stages'
   *  functions take an empty tensor in its place); initialisation, files
   *  and checkpoints see it whole. 0: every stage holds it. */
  int32_t staged;
  int32_t stage;
} metart_param_spec;

typedef struct metart_eval_spec {
  int64_t steps; /* adaptation steps */
  /** (params..., 4 batch tensors) -> losses[T] (, accuracies[T]) */
  metart_function function;
  metart_tasks *tasks;
  int64_t count;    /* evaluation tasks */
  int32_t accuracy; /* whether `function` also returns accuracies */
  /** A task whose query loss is above this (> 0), or not finite, has
   *  diverged; 0: only non-finite losses diverge. */
  double diverge_above;
} metart_eval_spec;

/** What a meta-iteration with a non-finite meta-loss or outer gradient
 *  does (its update is never applied). */
typedef enum metart_nonfinite {
  /** Options: the program's policy. Programs: as STOP. */
  METART_NONFINITE_PROGRAM = 0,
  /** End the run with METART_ERROR_NONFINITE, naming the iteration, the
   *  meta-loss and the first non-finite parameter or gradient. */
  METART_NONFINITE_STOP = 1,
  /** Drop the update and go on; the run still stops after
   *  `max_consecutive_skips` skipped iterations in a row. */
  METART_NONFINITE_SKIP = 2,
} metart_nonfinite;

/** The outer optimizer that parameter servers apply (meta.outer_step's). */
typedef enum metart_optimizer_kind {
  METART_OPTIMIZER_SGD = 0,
  METART_OPTIMIZER_ADAM = 1,
  METART_OPTIMIZER_ADAMW = 2,
} metart_optimizer_kind;
/** Parameter servers (meta.server_step): with `count` > 0, the job has
 *  `count` ranks after the mesh's that hold the meta-parameters and the
 *  outer optimizer's state, server s the elements [s * E / count, (s + 1)
 *  * E / count) of the parameters' flattened concatenation (E elements in
 *  all, one float type). The mesh's ranks push their partial outer
 *  gradients and meta-loss each meta-iteration and pull the parameters.
 *  Synchronous (`staleness` 0): the servers sum the pushes of an iteration
 *  in rank order, guard and apply one update, and every rank waits for it;
 *  `staleness` S: a rank computes on parameters at most S updates old;
 *  `asynchronous`: every push is an update of its own, by the pusher's
 *  mean gradient (its partial sum times the number of ranks), applied on
 *  arrival and answered at once. */
typedef struct metart_servers_desc {
  int64_t count;
  int64_t staleness;
  int32_t asynchronous;
  int32_t optimizer; /* metart_optimizer_kind */
  double lr, momentum, beta1, beta2, eps, weight_decay;
  /** The update guard: skip non-finite updates, and clip the summed
   *  gradient's norm to `clip_norm` when above 0. */
  int32_t guarded;
  double clip_norm;
} metart_servers_desc;

typedef struct metart_program {
  const char *name;
  /** (params..., state..., 4 batch tensors) -> (params..., state..., loss) */
  metart_function step;
  const metart_param_spec *params;
  int64_t num_params;
  /** Optimizer state: `state_per_param` buffers per parameter (zeros), then
   *  a tensor<i64> step count when `step_counter`. */
  int32_t state_per_param;
  int32_t step_counter;
  metart_tasks *tasks;
  int64_t meta_batch;
  int64_t iterations;
  uint64_t seed;
  const char *loss_name;
  const metart_eval_spec *evals;
  int64_t num_evals;
  /** The mesh the step was partitioned for: task, data, tensor, pipeline,
   *  expert (0 means 1). Each rank draws the global meta-batch's slice of its
   *  (task, data) coordinates: tasks [task * T / Dtask, +T / Dtask) and, of
   *  each, samples [data * N / Ddata, +N / Ddata) of support and query.
   *  Parameters and optimizer state are replicated; evaluation functions
   *  take local batches and return the losses of all T tasks. */
  int64_t mesh[METART_NUM_AXES];
  /** Non-zero: the step has an update guard and returns, after the loss,
   *  the squared norm of each outer gradient (f64 [num_params]). */
  int32_t guarded;
  int32_t on_nonfinite; /* metart_nonfinite */
  /** Floating-point operations of one meta-iteration on this rank, as the
   *  compiler's cost model counts them (0: unknown). */
  double flops_per_iteration;
  /** Non-zero: dynamic loss scaling. The step takes, after the optimizer
   *  state, the scale (a scalar of the loss's type) that multiplies its
   *  meta-loss before differentiation (it divides the gradients after).
   *  The driver keeps it: 65536 at first; a meta-iteration whose meta-loss
   *  is finite but whose gradient is not overflowed, so it is skipped
   *  (whatever the policy) and the scale halved; after 2000 healthy
   *  meta-iterations in a row it doubles (PyTorch's GradScaler). Needs
   *  `guarded`. */
  int32_t loss_scaling;
  /** ZeRO-1: with `zero_parts` > 1, the ranks of the group of `zero_mask`
   *  (task and data axes) each keep part r of the optimizer state of every
   *  parameter i with `zero_sharded[i]`: its state buffers are 1-d, of the
   *  parameter's element count / zero_parts elements, from element
   *  r * that of the flattened whole (r: the rank's position in the
   *  group). Checkpoints hold the whole buffers (gathered). */
  int64_t zero_parts;
  int32_t zero_mask;
  const int32_t *zero_sharded;
  /** Parameter servers (count 0: none). The step then takes and returns
   *  no optimizer state: the servers keep it (`state_per_param` and
   *  `step_counter` still describe it, for checkpoints, which the first
   *  worker writes from the servers' slices). */
  metart_servers_desc servers;
  /** Non-zero (--offload=optimizer): the optimizer's per-parameter state
   *  lives in host buffers (metart_host_buffer_alloc); the step copies
   *  each parameter's state to the device around its update. The step
   *  count stays on the device. */
  int32_t offload_optimizer;
  /** Non-zero (--offload=params|all): the parameters live in host buffers;
   *  the step and evaluation functions copy each to the device around
   *  every op that reads it, and its update. */
  int32_t offload_params;
  /** Non-zero (`schedule = pipedream`): the step finishes the previous
   *  meta-iteration and starts the next (meta_carry_load/store), so its
   *  first call after a start or a resume only fills the pipeline: its
   *  update is gated off in the program, and the trainer neither judges
   *  nor reports its meta-loss. */
  int32_t pipeline_fill;
  /** A meta-batch mixed from task classes (num_task_classes > 0; the
   *  spec's `mix`): class c draws `class_tasks[c]` tasks per meta-batch
   *  from `class_distributions[c]` (its own support and query sizes); its
   *  tasks are the meta-batch's tasks [sum of the earlier classes' counts,
   *  + class_tasks[c]). Ranks of the task axis compute different shares:
   *  per task coordinate, `task_assignment` holds the index of its step in
   *  `step_groups` (replacing `step`), then per class the first task (of
   *  the class's) and the count. Such a step takes four batch tensors per
   *  class with a non-zero count, in class order. */
  int64_t num_task_classes;
  metart_tasks *const *class_distributions;
  const int64_t *class_tasks;
  const metart_function *step_groups;
  int64_t num_step_groups;
  const int64_t *task_assignment;
} metart_program;

/** How checkpoints are written. GATHERED: one safetensors file of whole
 *  tensors, written by rank 0 (ZeRO's parts gathered first); SHARDED: every
 *  rank writes the pieces it holds into its own file, in parallel, and an
 *  index says where each tensor's pieces are; any mesh resumes from either.
 *  AUTO: sharded when the optimizer state is (ZeRO), else gathered. */
typedef enum metart_checkpoint_format {
  METART_CHECKPOINT_AUTO = 0,
  METART_CHECKPOINT_GATHERED = 1,
  METART_CHECKPOINT_SHARDED = 2,
} metart_checkpoint_format;

typedef struct metart_train_options {
  int64_t iterations;         /* < 0: the program's */
  const char *init_params;    /* safetensors to start from, or NULL */
  const char *save_params;    /* where to write the final parameters */
  const char *checkpoint_dir; /* NULL: no checkpoints */
  int64_t checkpoint_every;
  const char *resume_dir;   /* resume from its checkpoint, or NULL */
  const char *metrics_path; /* JSON lines, or NULL */
  /** 0: no progress output; 1: plain lines; 2: a bar on a terminal. */
  int32_t progress;
  /** Non-zero: time every runtime call of the meta-iterations after the
   *  first (device work included: device backends synchronise after each
   *  call, which slows them), printed by `metart_run` and written to the
   *  metrics file as a `{"profile": [...]}` line. */
  int32_t profile;
  /** Non-zero: every meta-iteration calls the step op by op. Otherwise a
   *  backend that can record (CUDA, one rank, not profiling) records the
   *  second meta-iteration as a CUDA graph and replays it for the rest. */
  int32_t no_graph;
  /** metart_nonfinite; METART_NONFINITE_PROGRAM: the program's. */
  int32_t on_nonfinite;
  /** Under SKIP, the run stops after this many skipped meta-iterations in
   *  a row (0: 20). */
  int64_t max_consecutive_skips;
  /** > 0: replaces every evaluation's divergence threshold. */
  double diverge_above;
  /** Non-zero: `init_params` may lack some of the model's parameters
   *  (a pretrained body without the task's head): those keep their
   *  initialisation, and are named on stderr. Tensors the file has must
   *  still match the model's; a file with none of them is an error. */
  int32_t init_params_partial;
  /** Where to write a timeline of the meta-iterations' runtime calls, in
   *  the Chrome trace event format (Perfetto, chrome://tracing), or NULL.
   *  With several ranks each writes its own: `.rank<r>` before a `.json`
   *  suffix. Device backends synchronise after each call, as profiling. */
  const char *trace_path;
  /** A straggler for tests and benchmarks: when `slow_factor` > 1, world
   *  rank `slow_rank` starts each meta-iteration's step late by
   *  (slow_factor - 1) times its fastest step so far, as a slower device
   *  would; the other ranks wait for it in the step's collectives. With
   *  `slow_period` > 0 the straggler moves on: for `slow_period`
   *  meta-iterations each, ranks slow_rank, slow_rank + 1, ... (modulo
   *  the world) in turn (a transient straggler, as a shared machine
   *  makes). */
  int64_t slow_rank;
  double slow_factor;
  int64_t slow_period;
  /** Seconds a blocking collective may make no progress before the run
   *  ends with an error naming the rank, the collective and its axes
   *  (0: METART_COMM_TIMEOUT, else 50). */
  double comm_timeout_seconds;
  /** A hang for tests: world rank `hang_rank` stops for good before
   *  meta-iteration `hang_iteration` (1-based; 0: none), as a hung device
   *  would; the others wait for it in the step's collectives. */
  int64_t hang_rank;
  int64_t hang_iteration;
  /** metart_checkpoint_format: how checkpoints are written (resuming reads
   *  either). */
  int32_t checkpoint_format;
} metart_train_options;

typedef struct metart_eval_result {
  int64_t steps;
  double mean;
  double ci95; /* half-width of the 95% confidence interval */
  int64_t count;
  /** Classification: the mean query accuracy over the tasks and its 95%
   *  confidence interval's half-width (when `has_accuracy`). */
  int32_t has_accuracy;
  double accuracy;
  double accuracy_ci95;
  /** `mean`, `ci95` and the accuracy are over the `count - diverged` tasks
   *  that stayed finite (and at most `diverge_above`, when > 0); `median`
   *  is over all `count` tasks, a diverged one counting as +infinity
   *  (infinite when more than half diverged). */
  double median;
  int64_t diverged;
  int64_t nonfinite; /* of the diverged, those with a non-finite loss */
  double diverge_above;
} metart_eval_result;

typedef struct metart_train_result {
  int64_t iterations_run;
  double final_loss;
  double seconds_per_iteration; /* mean over the run, after the first */
  size_t peak_device_bytes;
  metart_eval_result evals[16];
  int64_t num_evals;
  /** Collectives of the meta-iterations (not of evaluation), per axes
   *  mask, summed over the run. */
  metart_comm_stats comm[1 << METART_NUM_AXES];
  /** The process's peak resident memory (host RAM, all of it: code,
   *  data, the CPU backend's tensors). */
  size_t peak_host_bytes;
  /** How many meta-iterations were replays of a recorded CUDA graph. */
  int64_t replayed_iterations;
  /** Meta-iterations whose update was skipped (non-finite, under SKIP). */
  int64_t skipped_iterations;
  int32_t guarded; /* whether the meta-iterations were checked */
  /** The largest rank's peak device memory over the meta-iterations alone
   *  (peak_device_bytes is this rank's, evaluation included): what the
   *  cost model predicts per device. */
  size_t peak_train_device_bytes;
  /** With loss scaling: meta-iterations skipped because their gradient
   *  overflowed (also counted in skipped_iterations), and the scale at the
   *  end. */
  int64_t overflow_iterations;
  double loss_scale;
  /** Per meta-iteration (after the first), the time a rank's step computes
   *  (its time less its collectives', where it waits for the others): the
   *  busiest rank's and the mean over the ranks. Their ratio is the load
   *  imbalance. */
  double busy_seconds_max, busy_seconds_mean;
} metart_train_result;

/** Meta-trains `program` as `options` say. Errors (a bad file, a failing
 *  kernel) stop training with a message in `error`; files already written
 *  (checkpoints, metrics) stay intact. With a mesh of more than one rank,
 *  every rank calls it (it attaches a communicator for the mesh when the
 *  context has none); only rank 0 prints progress and writes parameters,
 *  checkpoints and metrics, and every rank waits for a checkpoint to be
 *  complete before it goes on. */
metart_status metart_train(metart_context *context,
                           const metart_program *program,
                           const metart_train_options *options,
                           metart_train_result *out_result, char *error,
                           size_t error_size);

/*===----------------------------------------------------------------------===*
 * Whole runs: what `metac run` and compiled executables call
 *===----------------------------------------------------------------------===*/

typedef enum metart_tasks_kind {
  METART_TASKS_SINUSOID = 0,
  METART_TASKS_EPISODES = 1,
  METART_TASKS_SEQUENCE = 2,
  METART_TASKS_FASHION_MNIST = 3,
  METART_TASKS_IMAGE_FOLDER = 4,
} metart_tasks_kind;

/** A task distribution to create: the configuration of its kind, or the
 *  episodes file. `path` is also the directory of fashion_mnist and
 *  image_folder, replacing their configurations' `path` (NULL or "" for
 *  Fashion-MNIST's default). Fields added later come last, so that
 *  initialisers written before them still fill the other fields. */
typedef struct metart_tasks_spec {
  int32_t kind; /* metart_tasks_kind */
  metart_sinusoid_config sinusoid;
  const char *path;
  metart_sequence_config sequence;
  metart_fashion_mnist_config fashion_mnist;
  metart_image_folder_config image_folder;
} metart_tasks_spec;

typedef struct metart_eval_desc {
  int64_t steps;
  metart_function function;
  metart_tasks_spec tasks;
  int64_t count;
  /** With pipeline stages: the function of each stage (mesh[3] entries),
   *  replacing `function`; NULL otherwise. */
  const metart_function *stage_functions;
  int32_t accuracy;     /* whether the functions also return accuracies */
  double diverge_above; /* as in metart_eval_spec */
} metart_eval_desc;

/** A compiled program as data: `metart_program` with task distributions
 *  described rather than created. */
typedef struct metart_program_desc {
  const char *name;
  metart_function step;
  const metart_param_spec *params;
  int64_t num_params;
  int32_t state_per_param;
  int32_t step_counter;
  metart_tasks_spec tasks;
  int64_t meta_batch;
  int64_t iterations;
  uint64_t seed;
  const char *loss_name;
  const metart_eval_desc *evals;
  int64_t num_evals;
  int64_t mesh[METART_NUM_AXES]; /* as in metart_program */
  /** With pipeline stages (mesh[3] > 1): the step of each stage, replacing
   *  `step`; a rank runs the one of its pipeline coordinate. */
  const metart_function *step_stages;
  /** The spec's `checkpoint { every, dir }` (0 and NULL when it has none):
   *  each applies when the run's options leave it unset. */
  int64_t checkpoint_every;
  const char *checkpoint_dir;
  int32_t guarded;             /* as in metart_program */
  int32_t on_nonfinite;        /* metart_nonfinite */
  double flops_per_iteration;  /* as in metart_program */
  int32_t loss_scaling;        /* as in metart_program */
  int64_t zero_parts;          /* as in metart_program */
  int32_t zero_mask;           /* as in metart_program */
  const int32_t *zero_sharded; /* as in metart_program */
  metart_servers_desc servers; /* as in metart_program */
  int32_t offload_optimizer;   /* as in metart_program */
  int32_t offload_params;      /* as in metart_program */
  int32_t pipeline_fill;       /* as in metart_program */
  /** A mixed meta-batch (as in metart_program): per class its tasks per
   *  meta-batch, support and query sizes (of `tasks`'s kind). */
  int64_t num_task_classes;
  const int64_t *class_tasks;
  const int64_t *class_support;
  const int64_t *class_query;
  const metart_function *step_groups;
  int64_t num_step_groups;
  const int64_t *task_assignment;
} metart_program_desc;

typedef struct metart_run_options {
  metart_train_options train;
  int64_t seed; /* < 0: the program's */
  /** "cpu", "cuda", or NULL for cuda when available, else cpu. */
  const char *backend;
  size_t memory_limit_bytes;
} metart_run_options;

/** Joins the world, creates the context (one GPU per process, by local
 *  rank), attaches a communicator for the program's mesh (a mesh that does
 *  not match the job is an error before anything runs) and the task
 *  distributions, trains and evaluates, and prints (rank 0) the run's
 *  figures, time and bytes in collectives per axis, and the evaluations to
 *  `out` (a FILE *). */
metart_status metart_run(const metart_program_desc *program,
                         const metart_run_options *options, void *out,
                         char *error, size_t error_size);

/** With a checkpoint directory, SIGTERM and SIGINT (on any rank) stop
 *  training after the meta-iteration in flight: every rank writes the
 *  checkpoint of the same iteration and metart_run returns
 *  METART_PREEMPTED; this says which signal (0: none), for the exit code
 *  128 + signal. Under MPI the watchdog gives the checkpoint
 *  METART_PREEMPT_GRACE seconds (120) before it ends the process. */
int metart_preemption_signal(void);

/** `main` of a compiled executable: parses the options `metac run` takes
 *  (--iterations, --seed, --init-params, --save-params, --checkpoint-every,
 *  --checkpoint-dir, --resume, --metrics, --backend, --memory-limit,
 *  --quiet, --profile, --help) and runs; returns the process exit code. */
int metart_main(int argc, char **argv, const metart_program_desc *program);

#ifdef __cplusplus
}
#endif

#endif /* METART_TRAIN_H */
