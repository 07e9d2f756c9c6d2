//===- Attention.cu - fused attention and its derivative on CUDA ----------===//
//
// In chunks of queries (AttentionChunks.cuh). The forward: scores
// S = q k^T (one product), the row softmax P = softmax(scale S) (causal
// keys past the query zero), y = P v (one product). The derivative, for
// the cotangents asked for: S again, dP = dy v^T, per row D = rowsum(P dP)
// and dS = scale P (dP - D), then dv += P^T dy, dq = dS k, dk += dS^T q:
// FlashAttention-2's backward with D from P and dP, as on the CPU (no
// rounded output cancels in dP - D). dk and dv sum over chunks; with
// 16-bit operands they sum in f32 and are rounded once at the end.
//
//===----------------------------------------------------------------------===//

#include "AttentionChunks.cuh"
#include "CudaBackend.h"
#include "Launch.cuh"
#include "Status.h"

namespace metart::cuda {

namespace {

/// P = softmax(scale S) per row of the chunk, into `p` (may be `scores`).
template <typename T, typename A>
__global__ void __launch_bounds__(kRowThreads)
    softmaxRowsKernel(int64_t count, int64_t rows, int64_t first, int64_t keys,
                      bool causal, A scale, const A *scores, T *p) {
  for (int64_t row = blockIdx.x; row < count; row += gridDim.x) {
    const A *s = scores + row * keys;
    T *out = p + row * keys;
    int64_t seen = seenKeys(causal, queryOf(row, rows, first), keys);
    A largest, total;
    softmaxStatistics(s, seen, scale, largest, total);
    __syncthreads(); // every read of the row before `out` (maybe `s`)
    for (int64_t j = threadIdx.x; j < keys; j += kRowThreads)
      out[j] = Store<T>::of(
          j < seen ? Math<A>::exp(scale * s[j] - largest) / total : A(0));
  }
}

/// P and dS = scale P (dP - D) per row, D = rowsum(P dP); without `dp`
/// only P. `p` and `ds` may be `scores` and `dp`.
template <typename T, typename A>
__global__ void __launch_bounds__(kRowThreads)
    backwardRowsKernel(int64_t count, int64_t rows, int64_t first, int64_t keys,
                       bool causal, A scale, const A *scores, const A *dp, T *p,
                       T *ds) {
  for (int64_t row = blockIdx.x; row < count; row += gridDim.x) {
    const A *s = scores + row * keys;
    const A *g = dp ? dp + row * keys : nullptr;
    int64_t seen = seenKeys(causal, queryOf(row, rows, first), keys);
    A largest, total;
    softmaxStatistics(s, seen, scale, largest, total);
    A d = 0;
    if (g) {
      double dot = 0;
      for (int64_t j = threadIdx.x; j < seen; j += kRowThreads)
        dot += double(Math<A>::exp(scale * s[j] - largest) / total * g[j]);
      d = A(blockReduce<kRowThreads>(dot, SumOp(), 0.0));
    }
    __syncthreads();
    for (int64_t j = threadIdx.x; j < keys; j += kRowThreads) {
      A pj = j < seen ? Math<A>::exp(scale * s[j] - largest) / total : A(0);
      A gj = g ? g[j] : A(0);
      p[row * keys + j] = Store<T>::of(pj);
      if (ds)
        ds[row * keys + j] = Store<T>::of(scale * pj * (gj - d));
    }
  }
}

/// Workspace carved into consecutive pieces.
struct Carver {
  char *next;
  template <typename X> X *take(int64_t count) {
    X *piece = reinterpret_cast<X *>(next);
    next += (count * int64_t(sizeof(X)) + 255) / 256 * 256;
    return piece;
  }
};

template <typename T>
KernelStatus attentionOf(const ChunkProducts &mm, DeviceWorkspace &workspace,
                         const AttentionSizes &s, const T *q, const T *k,
                         const T *v, T *y) {
  using A = typename Accumulator<T>::type;
  constexpr bool kSame = sizeof(T) == sizeof(A);
  Chunking c = chunkingOf(s, sizeof(A) + (kSame ? 0 : sizeof(T)));
  int64_t terms = c.group * c.rows * s.keys;
  size_t bytes = (terms * sizeof(A) + 255) / 256 * 256 + terms * sizeof(T);
  void *space = workspace.get(bytes);
  if (!space)
    return workspaceExhausted(bytes);
  Carver carve{static_cast<char *>(space)};
  A *scores = carve.take<A>(terms);
  T *p = kSame ? reinterpret_cast<T *>(scores) : carve.take<T>(terms);
  const int64_t S = s.length, K = s.keys, D = s.width, E = s.values;
  return forEachChunk(s, c, [&](const Chunk &chunk) {
    int64_t b = chunk.batch, group = chunk.group, first = chunk.first,
            rows = chunk.rows, keys = chunk.keys;
    const T *qc = q + (b * S + first) * D;
    KernelStatus status =
        mm(mm.accumulator, group, rows, keys, D, {qc, D, false, S * D},
           {k + b * K * D, D, true, K * D}, 0, {scores, keys, rows * keys});
    if (status.failed())
      return status;
    softmaxRowsKernel<<<rowBlocks(group * rows), kRowThreads, 0, mm.stream>>>(
        group * rows, rows, first, keys, s.causal, A(s.scale), scores, p);
    if (status = checkLaunch("attention softmax"); status.failed())
      return status;
    return mm(mm.dtype, group, rows, E, keys, {p, keys, false, rows * keys},
              {v + b * K * E, E, false, K * E}, 0,
              {y + (b * S + first) * E, E, S * E});
  });
}

template <typename T>
KernelStatus attentionBackwardOf(CudaBackend &backend, const ChunkProducts &mm,
                                 DeviceWorkspace &workspace,
                                 const AttentionSizes &s, const T *q,
                                 const T *k, const T *v, const T *dy, T *dq,
                                 T *dk, T *dv) {
  using A = typename Accumulator<T>::type;
  constexpr bool kSame = sizeof(T) == sizeof(A);
  bool scoresGrad = dq || dk;
  size_t perTerm = sizeof(A) * (scoresGrad ? 2 : 1) +
                   (kSame ? 0 : sizeof(T) * (scoresGrad ? 2 : 1));
  Chunking c = chunkingOf(s, perTerm);
  const int64_t S = s.length, K = s.keys, D = s.width, E = s.values;
  int64_t terms = c.group * c.rows * K;
  // dk and dv sum over the chunks: in f32 for 16-bit operands.
  int64_t dkSums = !kSame && dk ? s.batch * K * D : 0;
  int64_t dvSums = !kSame && dv ? s.batch * K * E : 0;
  size_t bytes = terms * perTerm + (dkSums + dvSums) * sizeof(A) + 6 * 256;
  void *space = workspace.get(bytes);
  if (!space)
    return workspaceExhausted(bytes);
  Carver carve{static_cast<char *>(space)};
  A *scores = carve.take<A>(terms);
  A *dp = scoresGrad ? carve.take<A>(terms) : nullptr;
  T *p = kSame ? reinterpret_cast<T *>(scores) : carve.take<T>(terms);
  T *ds = !scoresGrad ? nullptr
          : kSame     ? reinterpret_cast<T *>(dp)
                      : carve.take<T>(terms);
  A *dkSum = kSame ? reinterpret_cast<A *>(dk) : carve.take<A>(dkSums);
  A *dvSum = kSame ? reinterpret_cast<A *>(dv) : carve.take<A>(dvSums);
  for (auto [sum, count] : {std::pair{dkSum, dk ? s.batch * K * D : 0},
                            std::pair{dvSum, dv ? s.batch * K * E : 0}})
    if (KernelStatus status = zeroed(mm.stream, sum, count * sizeof(A));
        status.failed())
      return status;
  KernelStatus walked = forEachChunk(s, c, [&](const Chunk &chunk) {
    int64_t b = chunk.batch, group = chunk.group, first = chunk.first,
            rows = chunk.rows, keys = chunk.keys;
    const T *kb = k + b * K * D, *vb = v + b * K * E;
    const T *qc = q + (b * S + first) * D, *dyc = dy + (b * S + first) * E;
    KernelStatus status =
        mm(mm.accumulator, group, rows, keys, D, {qc, D, false, S * D},
           {kb, D, true, K * D}, 0, {scores, keys, rows * keys});
    if (!status.failed() && scoresGrad)
      status = mm(mm.accumulator, group, rows, keys, E, {dyc, E, false, S * E},
                  {vb, E, true, K * E}, 0, {dp, keys, rows * keys});
    if (status.failed())
      return status;
    backwardRowsKernel<<<rowBlocks(group * rows), kRowThreads, 0, mm.stream>>>(
        group * rows, rows, first, keys, s.causal, A(s.scale), scores, dp, p,
        ds);
    if (status = checkLaunch("attention backward rows"); status.failed())
      return status;
    // dv += P^T dy, dq = dS k, dk += dS^T q.
    if (dv)
      status =
          mm(mm.accumulator, group, keys, E, rows, {p, keys, true, rows * keys},
             {dyc, E, false, S * E}, 1, {dvSum + b * K * E, E, K * E});
    if (!status.failed() && dq)
      status =
          mm(mm.dtype, group, rows, D, keys, {ds, keys, false, rows * keys},
             {kb, D, false, K * D}, 0, {dq + (b * S + first) * D, D, S * D});
    if (!status.failed() && dk)
      status = mm(mm.accumulator, group, keys, D, rows,
                  {ds, keys, true, rows * keys}, {qc, D, false, S * D}, 1,
                  {dkSum + b * K * D, D, K * D});
    return status;
  });
  if (walked.failed())
    return walked;
  KernelStatus status = KernelStatus::ok();
  if constexpr (!kSame) {
    if (dk)
      status =
          backend.convert(mm.accumulator, mm.dtype, s.batch * K * D, dkSum, dk);
    if (!status.failed() && dv)
      status =
          backend.convert(mm.accumulator, mm.dtype, s.batch * K * E, dvSum, dv);
  }
  return status;
}

} // namespace

KernelStatus CudaBackend::attention(metart_dtype dtype,
                                    const AttentionSizes &sizes, const void *q,
                                    const void *k, const void *v, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  ChunkProducts mm(blas, stream.get(), dtype);
  return withDeviceFloat(dtype, [&](auto t) {
    using T = decltype(t);
    return attentionOf(mm, workspace, sizes, static_cast<const T *>(q),
                       static_cast<const T *>(k), static_cast<const T *>(v),
                       static_cast<T *>(y));
  });
}

KernelStatus CudaBackend::attentionBackward(metart_dtype dtype,
                                            const AttentionSizes &sizes,
                                            const void *q, const void *k,
                                            const void *v, const void *dy,
                                            void *dq, void *dk, void *dv) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  ChunkProducts mm(blas, stream.get(), dtype);
  return withDeviceFloat(dtype, [&](auto t) {
    using T = decltype(t);
    return attentionBackwardOf(
        *this, mm, workspace, sizes, static_cast<const T *>(q),
        static_cast<const T *>(k), static_cast<const T *>(v),
        static_cast<const T *>(dy), static_cast<T *>(dq), static_cast<T *>(dk),
        static_cast<T *>(dv));
  });
}

} // namespace metart::cuda
