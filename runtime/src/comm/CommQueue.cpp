//===- CommQueue.cpp - the communication thread ---------------------------===//

#include "CommQueue.h"

#include <chrono>

using namespace metart;
using namespace metart::comm;

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point begin) {
  return std::chrono::duration<double>(Clock::now() - begin).count();
}
} // namespace

CommQueue::~CommQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  changed.notify_all();
  // What was queued still runs: peers expect it.
  if (worker.joinable())
    worker.join();
  for (auto &[key, item] : started)
    if (item->release)
      item->release();
}

bool CommQueue::busy() {
  std::lock_guard<std::mutex> lock(mutex);
  return running || !queue.empty();
}

size_t CommQueue::pending() {
  std::lock_guard<std::mutex> lock(mutex);
  return started.size();
}

void CommQueue::enqueue(const std::shared_ptr<Item> &item) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!worker.joinable())
    worker = std::thread([this] { work(); });
  queue.push_back(item);
  changed.notify_all();
}

void CommQueue::work() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    changed.wait(lock, [&] { return stopping || !queue.empty(); });
    if (queue.empty())
      return;
    std::shared_ptr<Item> item = queue.front();
    queue.pop_front();
    running = true;
    lock.unlock();
    auto begin = Clock::now();
    KernelStatus status = item->task();
    double seconds = secondsSince(begin);
    lock.lock();
    item->status = status;
    item->runSeconds = seconds;
    item->done = true;
    item->task = nullptr;
    running = false;
    changed.notify_all();
  }
}

KernelStatus CommQueue::run(Task task) {
  if (!busy())
    return task();
  auto item = std::make_shared<Item>();
  item->task = std::move(task);
  enqueue(item);
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [&] { return item->done; });
  return item->status;
}

bool CommQueue::start(const void *key, int tag, Task task,
                      std::function<void()> release) {
  auto item = std::make_shared<Item>();
  item->tag = tag;
  item->task = std::move(task);
  item->release = std::move(release);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!started.emplace(key, item).second)
      return false;
  }
  enqueue(item);
  return true;
}

bool CommQueue::wait(const void *key, Completion &out) {
  auto begin = Clock::now();
  std::unique_lock<std::mutex> lock(mutex);
  auto it = started.find(key);
  if (it == started.end())
    return false;
  std::shared_ptr<Item> item = it->second;
  started.erase(it);
  changed.wait(lock, [&] { return item->done; });
  out.status = item->status;
  out.runSeconds = item->runSeconds;
  out.tag = item->tag;
  out.waitedSeconds = secondsSince(begin);
  lock.unlock();
  if (item->release)
    item->release();
  return true;
}

bool CommQueue::finished(const void *key, KernelStatus status, int tag,
                         double runSeconds) {
  auto item = std::make_shared<Item>();
  item->tag = tag;
  item->done = true;
  item->status = status;
  item->runSeconds = runSeconds;
  std::lock_guard<std::mutex> lock(mutex);
  return started.emplace(key, item).second;
}
