//===- Tasks.h - task distributions behind metart_tasks ---------*- C++ -*-===//
//
// The definition of the opaque `metart_tasks`: a task distribution (a
// `TaskSource`: sinusoid regression, fixed episodes) behind the common
// entry points, which check the arguments of every call before the source
// sees them, and the message of the handle's last error.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_DATA_TASKS_H
#define METART_SRC_DATA_TASKS_H

#include "metart/data.h"

#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace metart::data {

/// The element type and shape of one sample's inputs or targets.
struct SampleType {
  int32_t dtype;
  std::vector<int64_t> shape;

  /// The number of elements of one sample.
  int64_t elements() const;
};

/// What every task of a distribution looks like.
struct TaskLayout {
  SampleType inputs;
  SampleType targets;
  /// Samples per task in the support and query sets.
  int64_t support;
  int64_t query;
};

/// The caller's host buffers of one draw, laid out [count, samples, sample
/// shape...].
struct DrawBuffers {
  void *supportInputs;
  void *supportTargets;
  void *queryInputs;
  void *queryTargets;
};

/// A task distribution. Drawing is a pure function of the arguments: the
/// same call writes the same bytes, and tasks [a, c) drawn at once equal
/// [a, b) and [b, c) drawn apart.
class TaskSource {
public:
  explicit TaskSource(TaskLayout layout) : taskLayout(std::move(layout)) {}
  virtual ~TaskSource() = default;

  const TaskLayout &layout() const { return taskLayout; }

  /// Writes tasks [first, first + count) of draw `iteration` of `split`.
  /// The arguments are checked: split is known, iteration, first and count
  /// are non-negative, and buffers are non-null where they get bytes.
  virtual void draw(metart_split split, int64_t iteration, int64_t first,
                    int64_t count, const DrawBuffers &buffers) const = 0;

private:
  TaskLayout taskLayout;
};

/// Records `message` as the last error of `tasks`, or, for a null handle,
/// as this thread's last error without a handle.
void setTasksError(const metart_tasks *tasks, std::string message);

} // namespace metart::data

struct metart_tasks {
  explicit metart_tasks(std::unique_ptr<metart::data::TaskSource> source)
      : source(std::move(source)) {}

  std::unique_ptr<metart::data::TaskSource> source;
  /// Set by calls that take the handle as const, too.
  mutable std::string lastError;
};

namespace metart::data {

/// Sets `*out_tasks` to a new handle over a `Source` made from `args`; when
/// memory runs out, records that `function` failed.
template <typename Source, typename... Args>
metart_status createTasks(const char *function, metart_tasks **out_tasks,
                          Args &&...args) {
  try {
    *out_tasks =
        new metart_tasks(std::make_unique<Source>(std::forward<Args>(args)...));
  } catch (const std::bad_alloc &) {
    setTasksError(nullptr, std::string(function) + ": out of memory");
    return METART_ERROR_OUT_OF_MEMORY;
  }
  return METART_OK;
}

} // namespace metart::data

#endif // METART_SRC_DATA_TASKS_H
