//===- Gemm.cpp - matrix products through OpenBLAS ------------------------===//

#include "Gemm.h"
#include "Parallel.h"

#include <cblas.h>

#include <atomic>
#include <cstdlib>
#include <limits>

namespace metart::cpu {

bool fitsBlas(int64_t m, int64_t n, int64_t k) {
  int64_t limit = std::numeric_limits<blasint>::max();
  return m <= limit && n <= limit && k <= limit;
}

static CBLAS_TRANSPOSE transposeOf(bool transposed) {
  return transposed ? CblasTrans : CblasNoTrans;
}

/// OpenBLAS starts as many threads as the process may use cores: ranks
/// sharing a node's cores (more ranks than cores, which mpirun leaves
/// unbound) would run ranks x cores threads spinning against each other
/// (Fashion-MNIST on 4 ranks of 2 cores: 15% slower). Unless OpenBLAS's
/// own variables say otherwise, a rank's large GEMMs take as many threads
/// as its loops: the cores over the node's ranks.
///
/// Small ones take one. OpenBLAS splits every product it is given over its
/// threads, and its workers wait for the next one spinning on sched_yield,
/// which under any other load hands their core away: the f64 Fashion-MNIST
/// ConvNet, whose per-image products are small, ran 16x slower on two
/// threads than on one beside two niced processes (10.5 s against 0.64 s
/// per meta-iteration). Products of fewer than kParallelGemm multiply-adds
/// run on the calling thread, as do those made inside a parallel loop's
/// range (attention's tiles), which must not nest another team.
constexpr int64_t kParallelGemm = int64_t(1) << 22;

static bool blasThreadsFromEnvironment() {
  static const bool set =
      std::getenv("OPENBLAS_NUM_THREADS") || std::getenv("GOTO_NUM_THREADS");
  return set;
}

/// What OpenBLAS was last told (0: nothing yet).
static std::atomic<int> blasThreads{0};

static void chooseBlasThreads(int64_t m, int64_t n, int64_t k) {
  if (blasThreadsFromEnvironment())
    return;
  double work = double(m) * double(n) * double(k);
  int wanted = work < double(kParallelGemm) || insideParallelRange()
                   ? 1
                   : parallelThreads();
  if (blasThreads.exchange(wanted, std::memory_order_relaxed) != wanted)
    openblas_set_num_threads(wanted);
}

/// Whether the product has nothing to compute from `a` and `b`: with m or n
/// zero `c` is empty; with k zero, `c = beta * c`, which this does.
template <typename T>
static bool handleEmpty(int64_t m, int64_t n, int64_t k, T beta, T *c,
                        int64_t ldc) {
  if (m == 0 || n == 0)
    return true;
  if (k != 0)
    return false;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
  return true;
}

void gemm(int64_t m, int64_t n, int64_t k, MatrixRef<float> a,
          MatrixRef<float> b, float beta, float *c, int64_t ldc) {
  if (handleEmpty(m, n, k, beta, c, ldc))
    return;
  chooseBlasThreads(m, n, k);
  cblas_sgemm(CblasRowMajor, transposeOf(a.transposed),
              transposeOf(b.transposed), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a.data,
              static_cast<blasint>(a.ld), b.data, static_cast<blasint>(b.ld),
              beta, c, static_cast<blasint>(ldc));
}

void gemm(int64_t m, int64_t n, int64_t k, MatrixRef<double> a,
          MatrixRef<double> b, double beta, double *c, int64_t ldc) {
  if (handleEmpty(m, n, k, beta, c, ldc))
    return;
  chooseBlasThreads(m, n, k);
  cblas_dgemm(CblasRowMajor, transposeOf(a.transposed),
              transposeOf(b.transposed), static_cast<blasint>(m),
              static_cast<blasint>(n), static_cast<blasint>(k), 1.0, a.data,
              static_cast<blasint>(a.ld), b.data, static_cast<blasint>(b.ld),
              beta, c, static_cast<blasint>(ldc));
}

} // namespace metart::cpu
