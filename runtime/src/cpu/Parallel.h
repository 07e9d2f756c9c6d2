//===- Parallel.h - loops split over the CPU backend's threads --*- C++ -*-===//
//
// The kernels BLAS does not run (elementwise maps, pooling, reductions) are
// memory-bound loops; on one core they leave the other cores idle. A loop
// over independent indices is split into chunks that a small pool of
// threads and the calling thread take in turn. The pool has one thread per
// core this process may use, less one (the caller): METART_NUM_THREADS when
// set, else the cores of the process's affinity mask divided among the MPI
// ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE). Chunks are contiguous
// index ranges and every index is visited once, so results do not depend on
// the number of threads.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_PARALLEL_H
#define METART_SRC_CPU_PARALLEL_H

#include <cstdint>

namespace metart::cpu {

/// The threads loops run on (the caller included).
int parallelThreads();

/// Calls `fn(begin, end)` on disjoint ranges that cover [0, n), in parallel
/// when `n` is at least 2 * `grain` (a range has at least `grain` indices;
/// below that the work does not pay for waking threads). Returns when every
/// range is done. A loop started inside another loop's range runs on the
/// calling thread alone; one started while another runs on another thread
/// (another context) gets its own OpenMP team when built with oneDNN, and
/// runs on the calling thread alone otherwise.
template <typename Fn> void parallelFor(int64_t n, int64_t grain, Fn &&fn);

/// Whether the calling thread is running a range of a parallel loop (a
/// kernel called from one must not start another team, OpenBLAS's
/// included).
bool insideParallelRange();

/// The type-erased loop behind `parallelFor`.
using RangeFn = void (*)(void *state, int64_t begin, int64_t end);
void parallelForErased(int64_t n, int64_t grain, RangeFn fn, void *state);

template <typename Fn> void parallelFor(int64_t n, int64_t grain, Fn &&fn) {
  if (n < 2 * grain) {
    if (n > 0)
      fn(int64_t(0), n);
    return;
  }
  parallelForErased(
      n, grain,
      [](void *state, int64_t begin, int64_t end) {
        (*static_cast<Fn *>(state))(begin, end);
      },
      const_cast<void *>(static_cast<const void *>(&fn)));
}

/// Indices per range for elementwise loops: about 32 KiB of each operand.
constexpr int64_t kElementGrain = 8192;

} // namespace metart::cpu

#endif // METART_SRC_CPU_PARALLEL_H
