//===- AttentionChunks.cuh - fused attention's chunks on CUDA ---*- C++ -*-===//
//
// The CUDA attention kernels walk the queries in chunks: a chunk is `rows`
// consecutive queries of `group` consecutive batch items against the keys
// those queries see (all, or up to the chunk's last query when causal).
// Its scores and the other query x key terms of a derivative are products
// of one strided-batched cuBLAS call each (tensor cores from bf16/f16
// operands, f32 results), kept in a bounded workspace; one block per query
// row then does the softmax and the row sums, and writes the terms the
// next products read in the operands' type. Memory: the workspace of one
// chunk (chunkBudget(), more only when 64 query rows of one batch item
// take more), never S x T for all of the batch unless it fits that bound.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_ATTENTIONCHUNKS_CUH
#define METART_SRC_CUDA_ATTENTIONCHUNKS_CUH

#include "../KernelSizes.h"
#include "DeviceFloat.cuh"
#include "DeviceMath.cuh"
#include "Gemm.h"
#include "Reduce.cuh"
#include "Status.h"

#include <algorithm>
#include <cstdlib>

namespace metart::cuda {

/// The workspace the query x key terms of a chunk may take: 256 MiB, or
/// METART_ATTENTION_CHUNK_BYTES (tests make chunks small with it).
inline int64_t chunkBudget() {
  const char *set = std::getenv("METART_ATTENTION_CHUNK_BYTES");
  return set && std::atoll(set) > 0 ? std::atoll(set) : int64_t(256) << 20;
}
/// Threads per query row of the row kernels.
inline constexpr int kRowThreads = 128;

/// Batch items and queries per chunk.
struct Chunking {
  int64_t group, rows;
};

/// The chunking for terms of `bytesPerScore` bytes per query and key:
/// every batch item at once with as many queries as fit, down to 64
/// queries; fewer batch items when even that does not fit.
inline Chunking chunkingOf(const AttentionSizes &s, size_t bytesPerScore) {
  int64_t perRow = std::max<int64_t>(1, s.keys * int64_t(bytesPerScore));
  int64_t budget = chunkBudget();
  int64_t batch = std::max<int64_t>(1, s.batch);
  int64_t length = std::max<int64_t>(1, s.length);
  int64_t rows = std::clamp<int64_t>(budget / (batch * perRow), 1, length);
  if (rows >= std::min<int64_t>(64, length))
    return {batch, rows};
  rows = std::min<int64_t>(64, length);
  return {std::clamp<int64_t>(budget / (rows * perRow), 1, batch), rows};
}

/// The keys the queries [first, first + rows) see.
inline int64_t chunkKeys(const AttentionSizes &s, int64_t first, int64_t rows) {
  return s.causal ? std::min(s.keys, first + rows) : s.keys;
}

/// One chunk: batch items [batch, batch + group), queries [first, first +
/// rows) of each, against the first `keys` keys.
struct Chunk {
  int64_t batch, group, first, rows, keys;
};

/// Calls `fn(chunk)` for the chunks of `c` in order, batch items outer,
/// until one fails; returns that failure.
template <typename Fn>
KernelStatus forEachChunk(const AttentionSizes &s, const Chunking &c, Fn fn) {
  for (int64_t b = 0; b < s.batch; b += c.group)
    for (int64_t first = 0; first < s.length; first += c.rows) {
      int64_t rows = std::min(c.rows, s.length - first);
      Chunk chunk{b, std::min(c.group, s.batch - b), first, rows,
                  chunkKeys(s, first, rows)};
      if (KernelStatus status = fn(chunk); status.failed())
        return status;
    }
  return KernelStatus::ok();
}

/// The keys query `query` sees among the chunk's `keys`.
__device__ inline int64_t seenKeys(bool causal, int64_t query, int64_t keys) {
  return causal ? min(keys, query + 1) : keys;
}

/// The row's softmax statistics over its seen keys: the maximum of the
/// scaled scores and the sum of exp(scaled - maximum). Every thread of the
/// block gets them.
template <typename A>
__device__ void softmaxStatistics(const A *scores, int64_t seen, A scale,
                                  A &largest, A &total) {
  double m = -INFINITY;
  for (int64_t j = threadIdx.x; j < seen; j += kRowThreads)
    m = MaxOp()(m, double(scale * scores[j]));
  largest = A(blockReduce<kRowThreads>(m, MaxOp(), -INFINITY));
  double sum = 0;
  for (int64_t j = threadIdx.x; j < seen; j += kRowThreads)
    sum += double(Math<A>::exp(scale * scores[j] - largest));
  total = A(blockReduce<kRowThreads>(sum, SumOp(), 0.0));
}

/// The chunk's row `row` (of `rows` per batch item, the first being query
/// `first`): its query index.
__device__ inline int64_t queryOf(int64_t row, int64_t rows, int64_t first) {
  return first + row % rows;
}

/// Blocks for `count` rows of the row kernels.
inline unsigned rowBlocks(int64_t count) {
  return static_cast<unsigned>(std::clamp<int64_t>(count, 1, kMaxBlocks));
}

/// The cuBLAS calls of a chunk: operands of type `dtype` (whose products
/// accumulate in f32, or f64), results of `dtype` or of the accumulator's.
struct ChunkProducts {
  cublasHandle_t blas;
  cudaStream_t stream;
  metart_dtype dtype, accumulator;

  ChunkProducts(cublasHandle_t blas, cudaStream_t stream, metart_dtype dtype)
      : blas(blas), stream(stream), dtype(dtype),
        accumulator(dtype == METART_F64 ? METART_F64 : METART_F32) {}

  /// `c = a b + beta c` over `batch` matrices, the result of type `out`.
  KernelStatus operator()(metart_dtype out, int64_t batch, int64_t m, int64_t n,
                          int64_t k, const GemmOperand &a, const GemmOperand &b,
                          double beta, const GemmResult &c) const {
    return gemmInto(blas, stream, dtype, out, batch, m, n, k, a, b, beta, c);
  }
};

/// Zeroes `bytes` at `data` on `stream` (sums over chunks start there).
inline KernelStatus zeroed(cudaStream_t stream, void *data, size_t bytes) {
  if (bytes == 0)
    return KernelStatus::ok();
  return checkCuda(cudaMemsetAsync(data, 0, bytes, stream), "cudaMemsetAsync");
}

} // namespace metart::cuda

#endif // METART_SRC_CUDA_ATTENTIONCHUNKS_CUH
