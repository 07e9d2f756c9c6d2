//===- Parallel.cpp - loops split over the CPU backend's threads ----------===//
//
// One loop at a time: the caller publishes it (with a new generation number,
// under a mutex), wakes the workers, and every thread takes chunks until
// none is left; the caller then waits until the chunks taken are finished.
// Workers sleep on a condition variable between loops. A chunk is claimed
// from a counter that holds the generation in its high half, so a worker
// that wakes late, holding an older loop's snapshot, claims nothing of a
// newer loop.
//
// Built with oneDNN, loops run on OpenMP's team instead (libgomp, which
// oneDNN's Debian build uses): two pools on the same cores fought each
// other, OpenMP's workers spinning after each oneDNN call (28% of ConvNet
// MAML's samples) while this pool's waited for a core. One team, whose
// workers are still spinning from the last convolution when a loop starts,
// serves both. It is entered through libgomp's ABI (GOMP_parallel, what
// GCC emits for `#pragma omp parallel`): clang's -fopenmp would link LLVM's
// libomp, a second runtime with its own threads.
//
//===----------------------------------------------------------------------===//

#include "Parallel.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sched.h>
#include <thread>
#include <vector>

using namespace metart::cpu;

/// A positive integer from the environment variable `name`, or 0 when it is
/// unset. A value that is not one is ignored with a warning, so that a typo
/// does not silently change the thread count.
static int positiveFromEnvironment(const char *name) {
  const char *text = std::getenv(name);
  if (!text || !*text)
    return 0;
  char *end = nullptr;
  errno = 0;
  long value = std::strtol(text, &end, 10);
  if (*end == '\0' && errno == 0 && value > 0 && value <= 4096)
    return static_cast<int>(value);
  std::fprintf(stderr,
               "metart: warning: ignoring %s='%s' (expected an integer from 1 "
               "to 4096)\n",
               name, text);
  return 0;
}

static int chooseThreads() {
  if (int n = positiveFromEnvironment("METART_NUM_THREADS"))
    return n;
  cpu_set_t set;
  int cores = sched_getaffinity(0, sizeof(set), &set) == 0
                  ? CPU_COUNT(&set)
                  : static_cast<int>(std::thread::hardware_concurrency());
  int ranks = positiveFromEnvironment("OMPI_COMM_WORLD_LOCAL_SIZE");
  return std::max(1, cores / std::max(1, ranks));
}

#ifndef METART_PARALLEL_GOMP
namespace {

/// Set while this thread runs a range of a loop.
thread_local bool runningRange = false;

class Pool {
public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i)
      workers.emplace_back([this] { work(); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    for (std::thread &t : workers)
      t.join();
  }

  int threads() const { return static_cast<int>(workers.size()) + 1; }

  /// Runs the loop, or returns false when another loop is running.
  bool run(int64_t n, int64_t grain, RangeFn fn, void *state) {
    std::unique_lock<std::mutex> busy(running, std::try_to_lock);
    if (!busy.owns_lock())
      return false;
    // A few chunks per thread balance uneven ranges without many handoffs.
    int64_t chunks = std::min<int64_t>(n / grain, 4 * threads());
    Loop snapshot;
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++generation;
      loop = {n, chunks, fn, state, generation};
      next.store(generation << 32, std::memory_order_relaxed);
      done.store(0, std::memory_order_relaxed);
      snapshot = loop;
    }
    wake.notify_all();
    takeChunks(snapshot);
    std::unique_lock<std::mutex> lock(mutex);
    finished.wait(lock, [&] {
      return done.load(std::memory_order_acquire) == snapshot.chunks;
    });
    return true;
  }

private:
  struct Loop {
    int64_t n = 0, chunks = 0;
    RangeFn fn = nullptr;
    void *state = nullptr;
    uint64_t generation = 0;
  };

  /// Claims and runs chunks of the loop `l` until none is left or a newer
  /// loop replaced it.
  void takeChunks(const Loop &l) {
    uint64_t claim = next.load(std::memory_order_relaxed);
    for (;;) {
      if ((claim >> 32) != (l.generation & 0xFFFFFFFFu))
        return;
      int64_t c = static_cast<int64_t>(claim & 0xFFFFFFFFu);
      if (c >= l.chunks)
        return;
      if (!next.compare_exchange_weak(claim, claim + 1,
                                      std::memory_order_relaxed))
        continue;
      runningRange = true;
      l.fn(l.state, l.n * c / l.chunks, l.n * (c + 1) / l.chunks);
      runningRange = false;
      if (done.fetch_add(1, std::memory_order_acq_rel) + 1 == l.chunks) {
        std::lock_guard<std::mutex> lock(mutex);
        finished.notify_one();
      }
      claim = next.load(std::memory_order_relaxed);
    }
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      Loop snapshot;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || generation != seen; });
        if (stopping)
          return;
        seen = generation;
        snapshot = loop;
      }
      takeChunks(snapshot);
    }
  }

  std::vector<std::thread> workers;
  std::mutex running; // held by the thread whose loop runs
  std::mutex mutex;   // guards loop, generation, stopping
  std::condition_variable wake, finished;
  Loop loop;
  uint64_t generation = 0;
  bool stopping = false;
  /// generation << 32 | the next chunk to claim.
  std::atomic<uint64_t> next{0};
  std::atomic<int64_t> done{0};
};

Pool &pool() {
  static Pool instance(chooseThreads());
  return instance;
}

} // namespace
#endif

#ifdef METART_PARALLEL_GOMP

extern "C" {
void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads,
                   unsigned flags);
int omp_in_parallel(void);
}

namespace {

/// A loop on OpenMP's team: every thread of the team claims chunks.
struct TeamLoop {
  int64_t n, chunks;
  RangeFn fn;
  void *state;
  std::atomic<int64_t> next{0};

  static void run(void *data) {
    auto *loop = static_cast<TeamLoop *>(data);
    for (int64_t c = loop->next.fetch_add(1, std::memory_order_relaxed);
         c < loop->chunks;
         c = loop->next.fetch_add(1, std::memory_order_relaxed))
      loop->fn(loop->state, loop->n * c / loop->chunks,
               loop->n * (c + 1) / loop->chunks);
  }
};

} // namespace

int metart::cpu::parallelThreads() {
  static const int threads = chooseThreads();
  return threads;
}

bool metart::cpu::insideParallelRange() { return omp_in_parallel(); }

void metart::cpu::parallelForErased(int64_t n, int64_t grain, RangeFn fn,
                                    void *state) {
  int threads = parallelThreads();
  // Inside another team's region (a kernel called from a parallel loop)
  // the loop runs on its thread.
  if (threads == 1 || omp_in_parallel()) {
    fn(state, 0, n);
    return;
  }
  int64_t chunks = std::min<int64_t>(n / grain, 4 * threads);
  TeamLoop loop{n, chunks, fn, state};
  GOMP_parallel(&TeamLoop::run, &loop,
                static_cast<unsigned>(std::min<int64_t>(threads, chunks)), 0);
}

#else

int metart::cpu::parallelThreads() { return pool().threads(); }

bool metart::cpu::insideParallelRange() { return runningRange; }

void metart::cpu::parallelForErased(int64_t n, int64_t grain, RangeFn fn,
                                    void *state) {
  if (pool().threads() == 1 || !pool().run(n, grain, fn, state))
    fn(state, 0, n);
}

#endif
