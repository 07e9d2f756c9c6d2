//===- ProgramDescription.h - what the runtime needs to know -----*- C++
//-*-===//
//
// The facts about a compiled program that the runtime's driver needs and the
// IR holds: its parameters (names, types, initialisers), the optimizer's
// state layout, the task distributions, the step and evaluation functions.
// Read once from the IR; used by the JIT and by executables.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_RUNNER_PROGRAMDESCRIPTION_H
#define METAC_LIB_RUNNER_PROGRAMDESCRIPTION_H

#include "metart/train.h"

#include "mlir/IR/BuiltinOps.h"

#include <array>
#include <string>
#include <vector>

namespace metac {

struct TasksDescription {
  metart_tasks_spec spec{};
  std::string path; // episodes file
};

struct EvaluationDescription {
  std::string function;
  int64_t steps = 0, count = 0;
  TasksDescription tasks;
  /// Whether the function also returns per-task accuracies.
  bool accuracy = false;
  /// Tasks whose loss is above this (> 0) have diverged (0: non-finite only).
  double divergeAbove = 0;
};

struct ProgramDescription {
  std::string name, lossName, stepFunction;
  std::vector<std::string> paramNames;
  std::vector<std::vector<int64_t>> paramShapes;
  std::vector<metart_param_spec> params; // pointing into the two above
  int32_t statePerParam = 0, stepCounter = 0;
  TasksDescription tasks;
  std::vector<EvaluationDescription> evaluations;
  int64_t metaBatch = 0, iterations = 0;
  /// The spec's checkpoint block: period (0: none) and directory.
  int64_t checkpointEvery = 0;
  std::string checkpointDir;
  uint64_t seed = 0;
  /// Mesh axes task, data, tensor, pipeline, expert, sequence of a partitioned
  /// program (the step then takes this rank's slice of the task batch).
  std::array<int64_t, 6> mesh{1, 1, 1, 1, 1, 1};
  /// Pipeline stages: the step and each evaluation function have one
  /// function per stage, `<name>.stage<s>`.
  int64_t stages = 1;
  /// Whether the step has an update guard (and returns its gradient norms
  /// after the loss), and the spec's policy (metart_nonfinite).
  bool guarded = false;
  int32_t onNonfinite = 0;
  /// Whether the step takes a loss scale after the optimizer state
  /// (dynamic loss scaling, kept by the runtime).
  int32_t lossScaling = 0;
  /// ZeRO-1 (`meta.zero_parts` on the step): the ranks of the axes in
  /// `zeroMask` keep 1/`zeroParts` of the optimizer state of each
  /// parameter whose `zeroSharded` is 1.
  int64_t zeroParts = 1;
  int32_t zeroMask = 0;
  std::vector<int32_t> zeroSharded;
  /// The cost model's FLOPs of one meta-iteration of this rank's step (of
  /// pipeline stage 0's, with stages).
  double flopsPerIteration = 0;
  /// Parameter servers (a meta.server_step in the step; count 0: none).
  metart_servers_desc servers{};
  /// --offload=optimizer (`meta.offload` on the step).
  int32_t offloadOptimizer = 0;
  /// --offload=params|all: the parameters live in host buffers.
  int32_t offloadParams = 0;
  /// The step carries values to its next call (schedule = pipedream).
  int32_t pipelineFill = 0;
  /// A mixed meta-batch (`meta.task_mix`): per class its tasks per
  /// meta-batch and sizes; the step of each group of task ranks
  /// (`stepFunction` is group 0's); `meta.task_assignment`.
  std::vector<int64_t> classTasks, classSupport, classQuery, taskAssignment;
  std::vector<std::string> stepGroups;
};

/// The symbol of `function`'s code for pipeline stage `stage`.
std::string stageFunction(const std::string &function, int64_t stages,
                          int64_t stage);

/// Reads the description of the program of `module` (after the expand
/// phase, with one meta.train). Reports what the runtime cannot run.
mlir::FailureOr<ProgramDescription> describeProgram(mlir::ModuleOp module);

} // namespace metac

#endif // METAC_LIB_RUNNER_PROGRAMDESCRIPTION_H
