//===- TaskAssignment.h - a mixed meta-batch over the task axis -*- C++ -*-===//
//
// A meta-batch drawn from task classes of different cost (`mix` in a spec,
// `meta.task_mix` on meta.train) is split over the task axis by cost or by
// count. Ranks whose share of each class is the same run the same step
// function; each distinct share is a group with its own function.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_DIALECT_META_TRANSFORMS_TASKASSIGNMENT_H
#define METAC_DIALECT_META_TRANSFORMS_TASKASSIGNMENT_H

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>
#include <string>
#include <vector>

namespace metac::meta {

struct TaskClass {
  std::string name;
  int64_t tasks = 0, support = 0, query = 0, steps = 0;
};

/// The classes of a `meta.task_mix` attribute (nullopt when malformed).
std::optional<std::vector<TaskClass>> readTaskClasses(mlir::ArrayAttr mix);

/// The estimated cost of one task of `c`, in forward passes of the model
/// over one sample: per inner step a forward and backward pass over the
/// support set (3), which the second-order meta-gradient differentiates
/// again (6 more); a forward and backward pass over the query set (3); per
/// step a parameter-sized update (1, twice at second order); and one
/// parameter-sized broadcast per task. `prototypes` (ProtoNets): no inner
/// steps, a forward and backward pass over the support set instead.
double estimateTaskCost(const TaskClass &c, int64_t order,
                        bool prototypes = false);

struct TaskAssignment {
  /// Per task coordinate: its group, and per class the first task (of the
  /// class's tasks in the meta-batch) and the number of tasks it computes.
  std::vector<int64_t> groupOf;
  std::vector<std::vector<int64_t>> first, count;
  /// Per group: how many tasks of each class a rank of it computes.
  std::vector<std::vector<int64_t>> groups;
  /// Per task coordinate: its estimated cost (for reports).
  std::vector<double> cost;
};

/// Splits the classes' tasks over `parts` task ranks: `byCost` assigns the
/// most expensive tasks first, each to the least loaded rank (LPT); else
/// the meta-batch, class after class, is cut into equal counts. Empty
/// `error` on success.
TaskAssignment assignTasks(llvm::ArrayRef<TaskClass> classes, int64_t parts,
                           bool byCost, int64_t order, bool prototypes,
                           std::string &error);

/// `meta.task_assignment`: per task coordinate its group, then per class
/// the first task and the count.
std::vector<int64_t> flattenAssignment(const TaskAssignment &a);

/// Takes the step and evaluation functions of the train op `train` out of
/// `module`, back to the meta phase: a mixed meta-batch is expanded again
/// for another task axis.
void dropExpansion(mlir::ModuleOp module, llvm::StringRef train);

/// One batch of tasks of a step: `count` tasks of `support` and `query`
/// samples, adapted by `steps` inner steps (-1: the algorithm's).
struct BatchPart {
  int64_t count, support, query, steps;
};

/// Expands the mixed meta-batch `mix` of `train`: splits its classes over
/// `taskParts` task ranks (0: the train's plan) by `balance` (empty: the
/// train's meta.balance, else cost), builds each group's step with
/// `buildStep`, and records meta.step, meta.step_variants,
/// meta.task_assignment and meta.task_parts on the train op.
mlir::LogicalResult
expandTaskGroups(TrainOp train, mlir::ArrayAttr mix, int64_t taskParts,
                 llvm::StringRef balance,
                 llvm::function_ref<mlir::FailureOr<mlir::func::FuncOp>(
                     llvm::StringRef, llvm::ArrayRef<BatchPart>)>
                     buildStep);

} // namespace metac::meta

#endif // METAC_DIALECT_META_TRANSFORMS_TASKASSIGNMENT_H
