//===- TaskDraw.h - drawing tasks into vectors in tests ---------*- C++ -*-===//
//
// Holds the four buffers of a draw (sized from the handle's description)
// so tests can compare whole draws and their slices.
//
//===----------------------------------------------------------------------===//

#ifndef METART_TEST_DATA_TASKDRAW_H
#define METART_TEST_DATA_TASKDRAW_H

#include "metart/data.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace metart::test {

/// The elements of one sample of `which` (0 inputs, 1 targets) of `tasks`.
inline int64_t sampleElements(const metart_tasks *tasks, int which) {
  int32_t dtype = -1, rank = -1;
  const int64_t *shape = nullptr;
  EXPECT_EQ(metart_tasks_sample_type(tasks, which, &dtype, &rank, &shape),
            METART_OK);
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i)
    n *= shape[i];
  return n;
}

/// Tasks drawn into vectors of `X` (inputs) and `Y` (targets).
template <typename X, typename Y = X> struct TaskDraw {
  std::vector<X> supportX, queryX;
  std::vector<Y> supportY, queryY;
  int64_t tasks = 0;

  /// The part of this draw of tasks [first, first + count) as a draw.
  TaskDraw slice(int64_t first, int64_t count) const {
    auto cut = [&](const auto &v) {
      auto perTask = static_cast<int64_t>(v.size()) / tasks;
      return std::decay_t<decltype(v)>(v.begin() + first * perTask,
                                       v.begin() + (first + count) * perTask);
    };
    return {cut(supportX), cut(queryX), cut(supportY), cut(queryY), count};
  }

  /// The same draw concatenated with `next`.
  TaskDraw operator+(const TaskDraw &next) const {
    TaskDraw joined = *this;
    auto append = [](auto &a, const auto &b) {
      a.insert(a.end(), b.begin(), b.end());
    };
    append(joined.supportX, next.supportX);
    append(joined.queryX, next.queryX);
    append(joined.supportY, next.supportY);
    append(joined.queryY, next.queryY);
    joined.tasks += next.tasks;
    return joined;
  }

  bool operator==(const TaskDraw &other) const {
    return supportX == other.supportX && queryX == other.queryX &&
           supportY == other.supportY && queryY == other.queryY;
  }
};

/// Draws tasks [first, first + count) of draw `iteration` of `split`.
template <typename X, typename Y = X>
TaskDraw<X, Y> drawTasks(metart_tasks *tasks, metart_split split,
                         int64_t iteration, int64_t first, int64_t count) {
  int64_t support = 0, query = 0;
  metart_tasks_sizes(tasks, &support, &query);
  int64_t x = sampleElements(tasks, 0), y = sampleElements(tasks, 1);
  TaskDraw<X, Y> draw;
  draw.supportX.resize(static_cast<size_t>(count * support * x));
  draw.supportY.resize(static_cast<size_t>(count * support * y));
  draw.queryX.resize(static_cast<size_t>(count * query * x));
  draw.queryY.resize(static_cast<size_t>(count * query * y));
  draw.tasks = count;
  EXPECT_EQ(metart_tasks_draw(tasks, split, iteration, first, count,
                              draw.supportX.data(), draw.supportY.data(),
                              draw.queryX.data(), draw.queryY.data()),
            METART_OK)
      << metart_tasks_last_error(tasks);
  return draw;
}

} // namespace metart::test

#endif // METART_TEST_DATA_TASKDRAW_H
