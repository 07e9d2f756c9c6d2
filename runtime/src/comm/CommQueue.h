//===- CommQueue.h - collectives that run while the caller computes -*- C++
//-*-===//
//
// An asynchronous collective (metart_all_reduce_start) runs on one
// communication thread per communicator while the caller goes on
// computing; metart_collective_wait blocks until it has completed. Every
// collective of the context keeps program order: while one is queued or
// running, a blocking collective queues behind it and the caller waits for
// its own; when the queue is idle it runs on the caller's thread, as it
// always has. One thread at a time calls MPI (MPI_THREAD_SERIALIZED), and
// every rank issues the same sequence per group as without the queue, so
// no new deadlock is possible.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_COMMQUEUE_H
#define METART_SRC_COMM_COMMQUEUE_H

#include "../Tensor.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace metart::comm {

class CommQueue {
public:
  using Task = std::function<KernelStatus()>;

  /// What a wait learns about its collective.
  struct Completion {
    KernelStatus status;
    /// The collective's own run time on the communication thread.
    double runSeconds = 0;
    /// How long the caller was blocked in the wait.
    double waitedSeconds = 0;
    int tag = 0;
  };

  CommQueue() = default;
  ~CommQueue();
  CommQueue(const CommQueue &) = delete;
  CommQueue &operator=(const CommQueue &) = delete;

  /// Whether a collective is queued or running.
  bool busy();
  /// Runs `task` in program order and returns its status: here when the
  /// queue is idle, else after what is queued.
  KernelStatus run(Task task);
  /// Queues `task` under `key` (the result's address); false when a
  /// collective with that key has not been waited for. `release` runs on
  /// the caller's thread once the task is done (in the wait): it frees
  /// what the task used, which only the caller's thread may.
  /// `tag` comes back in the completion (the collective's axes mask).
  bool start(const void *key, int tag, Task task,
             std::function<void()> release = {});
  /// Records a collective that already ran (synchronously) under `key`.
  bool finished(const void *key, KernelStatus status, int tag,
                double runSeconds);
  /// Waits for the collective queued under `key`; false when there is none.
  bool wait(const void *key, Completion &out);
  /// Collectives started and not yet waited for.
  size_t pending();

private:
  struct Item {
    Task task;
    bool done = false;
    KernelStatus status;
    double runSeconds = 0;
    int tag = 0;
    std::function<void()> release;
  };

  void enqueue(const std::shared_ptr<Item> &item);
  void work();

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::shared_ptr<Item>> queue;
  bool running = false;
  bool stopping = false;
  std::map<const void *, std::shared_ptr<Item>> started;
  std::thread worker;
};

} // namespace metart::comm

#endif // METART_SRC_COMM_COMMQUEUE_H
