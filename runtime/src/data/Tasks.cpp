//===- Tasks.cpp - the entry points common to task distributions ----------===//
//
// Destroying a handle, describing its samples, drawing (after checking the
// arguments) and the message of the last error, per handle or, without
// one, per thread.
//
//===----------------------------------------------------------------------===//

#include "data/Tasks.h"

#include <cstring>

using namespace metart::data;

/// The last error of a call that had no handle to record it on.
static thread_local std::string lastErrorWithoutTasks;

int64_t SampleType::elements() const {
  int64_t n = 1;
  for (int64_t dim : shape)
    n *= dim;
  return n;
}

void metart::data::setTasksError(const metart_tasks *tasks,
                                 std::string message) {
  if (tasks)
    tasks->lastError = std::move(message);
  else
    lastErrorWithoutTasks = std::move(message);
}

void metart_tasks_destroy(metart_tasks *tasks) { delete tasks; }

const char *metart_tasks_last_error(const metart_tasks *tasks) {
  return tasks ? tasks->lastError.c_str() : lastErrorWithoutTasks.c_str();
}

metart_status metart_tasks_sample_type(const metart_tasks *tasks, int which,
                                       int32_t *out_dtype, int32_t *out_rank,
                                       const int64_t **out_shape) {
  auto fail = [&](std::string message) {
    setTasksError(tasks, "metart_tasks_sample_type: " + std::move(message));
    return METART_ERROR_INVALID_ARGUMENT;
  };
  if (!tasks)
    return fail("tasks is null");
  if (which != 0 && which != 1)
    return fail("which is " + std::to_string(which) +
                ", not 0 (inputs) or 1 (targets)");
  if (!out_dtype || !out_rank || !out_shape)
    return fail("an out parameter is null");
  const TaskLayout &layout = tasks->source->layout();
  const SampleType &type = which == 0 ? layout.inputs : layout.targets;
  *out_dtype = type.dtype;
  *out_rank = static_cast<int32_t>(type.shape.size());
  *out_shape = type.shape.data();
  return METART_OK;
}

void metart_tasks_sizes(const metart_tasks *tasks, int64_t *out_support,
                        int64_t *out_query) {
  const TaskLayout *layout = tasks ? &tasks->source->layout() : nullptr;
  if (out_support)
    *out_support = layout ? layout->support : 0;
  if (out_query)
    *out_query = layout ? layout->query : 0;
}

metart_status metart_tasks_draw(metart_tasks *tasks, metart_split split,
                                int64_t iteration, int64_t first, int64_t count,
                                void *support_inputs, void *support_targets,
                                void *query_inputs, void *query_targets) {
  auto fail = [&](std::string message) {
    setTasksError(tasks, "metart_tasks_draw: " + std::move(message));
    return METART_ERROR_INVALID_ARGUMENT;
  };
  if (!tasks)
    return fail("tasks is null");
  // A C caller may pass any int: look at it without loading a C++ enum
  // value outside the enum's range.
  static_assert(sizeof(metart_split) <= sizeof(int), "split fits an int");
  int rawSplit = 0;
  std::memcpy(&rawSplit, &split, sizeof(split));
  if (rawSplit != METART_SPLIT_TRAIN && rawSplit != METART_SPLIT_EVAL)
    return fail("split is " + std::to_string(rawSplit) +
                ", not METART_SPLIT_TRAIN or METART_SPLIT_EVAL");
  if (iteration < 0 || first < 0 || count < 0)
    return fail("iteration " + std::to_string(iteration) + ", first " +
                std::to_string(first) + " and count " + std::to_string(count) +
                " must not be negative");
  if (count > INT64_MAX - first)
    return fail("first + count overflows");

  const TaskLayout &layout = tasks->source->layout();
  struct Buffer {
    void *data;
    int64_t elements;
    const char *name;
  } buffers[] = {
      {support_inputs, layout.support * layout.inputs.elements(),
       "support_inputs"},
      {support_targets, layout.support * layout.targets.elements(),
       "support_targets"},
      {query_inputs, layout.query * layout.inputs.elements(), "query_inputs"},
      {query_targets, layout.query * layout.targets.elements(),
       "query_targets"},
  };
  for (const Buffer &buffer : buffers)
    if (!buffer.data && count > 0 && buffer.elements > 0)
      return fail(std::string(buffer.name) + " is null");

  tasks->source->draw(
      split, iteration, first, count,
      {support_inputs, support_targets, query_inputs, query_targets});
  return METART_OK;
}
