//===- AttentionDoubleBackward.cu - attention's second derivative ---------===//
//
// The derivative of attention's backward for the cotangents gq, gk, gv of
// its results, in chunks of queries (AttentionChunks.cuh), with the CPU
// kernel's formulas (cpu/AttentionDoubleBackward.cpp): per query i and key
// j, with P the probabilities, dP = dy v^T, D = rowsum(P dP),
// dS = P (dP - D):
//   dS-bar = scale (gq k^T + q gk^T),   r = rowsum(P dS-bar),
//   P-bar  = dy gv^T + dS-bar (dP - D) - r dP,
//   S-bar  = P (P-bar - rowsum(P P-bar)),   dP-bar = P (dS-bar - r),
// and the cotangents
//   q-bar  = scale (S-bar k + dS gk),   k-bar = scale (S-bar^T q + dS^T gq),
//   v-bar  = dP-bar^T dy,               dy-bar = P gv + dP-bar v.
// Four products give a chunk's scores, dP, gq k^T + q gk^T and dy gv^T; one
// block per query row sums the row statistics and writes P, scale dS,
// dP-bar and scale S-bar in the operands' type; up to seven products
// contract them. With 16-bit operands the cotangents sum in f32 and are
// rounded once at the end.
//
//===----------------------------------------------------------------------===//

#include "AttentionChunks.cuh"
#include "CudaBackend.h"
#include "Launch.cuh"
#include "Status.h"

namespace metart::cuda {

namespace {

/// A chunk's query x key terms, each `keys` per row: read (A) ...
template <typename A> struct RowTerms {
  const A *scores, *dp, *dsBar, *dyGv; // dsBar, dyGv may be null (zero)
};
/// ... and written in the operands' type (each may be its read term).
template <typename T> struct RowResults { T *p, *ds, *dpBar, *sBar; };

template <typename T, typename A>
__global__ void __launch_bounds__(kRowThreads)
    doubleBackwardRowsKernel(int64_t count, int64_t rows, int64_t first,
                             int64_t keys, bool causal, A scale, RowTerms<A> in,
                             RowResults<T> out) {
  for (int64_t row = blockIdx.x; row < count; row += gridDim.x) {
    int64_t at = row * keys;
    const A *s = in.scores + at, *dp = in.dp + at;
    const A *dsBar = in.dsBar ? in.dsBar + at : nullptr;
    const A *dyGv = in.dyGv ? in.dyGv + at : nullptr;
    int64_t seen = seenKeys(causal, queryOf(row, rows, first), keys);
    A largest, total;
    softmaxStatistics(s, seen, scale, largest, total);
    auto prob = [&](int64_t j) {
      return Math<A>::exp(scale * s[j] - largest) / total;
    };
    auto dsBarAt = [&](int64_t j) { return dsBar ? scale * dsBar[j] : A(0); };
    double dSum = 0, rSum = 0;
    for (int64_t j = threadIdx.x; j < seen; j += kRowThreads) {
      A pj = prob(j);
      dSum += double(pj * dp[j]);
      rSum += double(pj * dsBarAt(j));
    }
    A d = A(blockReduce<kRowThreads>(dSum, SumOp(), 0.0));
    A r = A(blockReduce<kRowThreads>(rSum, SumOp(), 0.0));
    auto pBar = [&](int64_t j) {
      return dsBarAt(j) * (dp[j] - d) - r * dp[j] + (dyGv ? dyGv[j] : A(0));
    };
    double tSum = 0;
    for (int64_t j = threadIdx.x; j < seen; j += kRowThreads)
      tSum += double(prob(j) * pBar(j));
    A t = A(blockReduce<kRowThreads>(tSum, SumOp(), 0.0));
    __syncthreads(); // every read of the row before the writes (in place)
    for (int64_t j = threadIdx.x; j < keys; j += kRowThreads) {
      bool visible = j < seen;
      A pj = visible ? prob(j) : A(0);
      // Computed before any write: the results may be the read terms.
      A ds = scale * pj * (dp[j] - d);
      A dpBar = pj * (dsBarAt(j) - r);
      A sBar = visible ? scale * pj * (pBar(j) - t) : A(0);
      out.p[at + j] = Store<T>::of(pj);
      out.ds[at + j] = Store<T>::of(ds);
      out.dpBar[at + j] = Store<T>::of(dpBar);
      out.sBar[at + j] = Store<T>::of(sBar);
    }
  }
}

template <typename T>
KernelStatus doubleBackwardOf(CudaBackend &backend, const ChunkProducts &mm,
                              DeviceWorkspace &workspace,
                              const AttentionSizes &s,
                              const AttentionOperands &operands,
                              const AttentionCotangents &cotangents) {
  using A = typename Accumulator<T>::type;
  constexpr bool kSame = sizeof(T) == sizeof(A);
  auto in = [](const void *p) { return static_cast<const T *>(p); };
  const T *q = in(operands.q), *k = in(operands.k), *v = in(operands.v),
          *dy = in(operands.dy), *gq = in(operands.gq), *gk = in(operands.gk),
          *gv = in(operands.gv);
  T *outs[] = {static_cast<T *>(cotangents.q), static_cast<T *>(cotangents.k),
               static_cast<T *>(cotangents.v), static_cast<T *>(cotangents.dy)};
  const int64_t S = s.length, K = s.keys, D = s.width, E = s.values;
  const int64_t sizes[] = {s.batch * S * D, s.batch * K * D, s.batch * K * E,
                           s.batch * S * E};
  Chunking c = chunkingOf(s, 4 * sizeof(A) + (kSame ? 0 : 4 * sizeof(T)));
  int64_t terms = c.group * c.rows * K;
  size_t bytes = 4 * terms * (sizeof(A) + (kSame ? 0 : sizeof(T))) + 16 * 256;
  if (!kSame)
    for (int i = 0; i < 4; ++i)
      bytes += outs[i] ? sizes[i] * sizeof(A) : 0;
  void *space = workspace.get(bytes);
  if (!space)
    return workspaceExhausted(bytes);
  char *next = static_cast<char *>(space);
  auto take = [&](size_t count, size_t size) {
    void *piece = next;
    next += (count * size + 255) / 256 * 256;
    return piece;
  };
  A *scores = static_cast<A *>(take(terms, sizeof(A)));
  A *dp = static_cast<A *>(take(terms, sizeof(A)));
  A *dsBar = static_cast<A *>(take(terms, sizeof(A)));
  A *dyGv = static_cast<A *>(take(terms, sizeof(A)));
  RowResults<T> rowsOut;
  if (kSame)
    rowsOut = {reinterpret_cast<T *>(scores), reinterpret_cast<T *>(dp),
               reinterpret_cast<T *>(dsBar), reinterpret_cast<T *>(dyGv)};
  else
    rowsOut = {static_cast<T *>(take(terms, sizeof(T))),
               static_cast<T *>(take(terms, sizeof(T))),
               static_cast<T *>(take(terms, sizeof(T))),
               static_cast<T *>(take(terms, sizeof(T)))};
  // Where each cotangent sums: itself, or f32 for 16-bit operands.
  A *sums[4];
  for (int i = 0; i < 4; ++i)
    sums[i] = !outs[i] ? nullptr
              : kSame  ? reinterpret_cast<A *>(outs[i])
                       : static_cast<A *>(take(sizes[i], sizeof(A)));
  // k-bar and v-bar sum over the chunks of queries.
  for (int i : {1, 2})
    if (sums[i])
      if (KernelStatus status =
              zeroed(mm.stream, sums[i], sizes[i] * sizeof(A));
          status.failed())
        return status;
  bool scoresBar = gq || gk;
  metart_dtype acc = mm.accumulator;
  KernelStatus walked = forEachChunk(s, c, [&](const Chunk &chunk) {
    int64_t b = chunk.batch, group = chunk.group, first = chunk.first,
            rows = chunk.rows, keys = chunk.keys;
    const T *kb = k + b * K * D, *vb = v + b * K * E;
    int64_t qAt = (b * S + first) * D, yAt = (b * S + first) * E;
    GemmResult terms{nullptr, keys, rows * keys};
    auto into = [&](A *data) {
      GemmResult r = terms;
      r.data = data;
      return r;
    };
    GemmOperand keysOf{kb, D, true, K * D}, valuesOf{vb, E, true, K * E};
    KernelStatus status =
        mm(acc, group, rows, keys, D, {q + qAt, D, false, S * D}, keysOf, 0,
           into(scores));
    if (!status.failed())
      status = mm(acc, group, rows, keys, E, {dy + yAt, E, false, S * E},
                  valuesOf, 0, into(dp));
    if (!status.failed() && gq)
      status = mm(acc, group, rows, keys, D, {gq + qAt, D, false, S * D},
                  keysOf, 0, into(dsBar));
    if (!status.failed() && gk)
      status = mm(acc, group, rows, keys, D, {q + qAt, D, false, S * D},
                  {gk + b * K * D, D, true, K * D}, gq ? 1 : 0, into(dsBar));
    if (!status.failed() && gv)
      status = mm(acc, group, rows, keys, E, {dy + yAt, E, false, S * E},
                  {gv + b * K * E, E, true, K * E}, 0, into(dyGv));
    if (status.failed())
      return status;
    doubleBackwardRowsKernel<<<rowBlocks(group * rows), kRowThreads, 0,
                               mm.stream>>>(
        group * rows, rows, first, keys, s.causal, A(s.scale),
        RowTerms<A>{scores, dp, scoresBar ? dsBar : nullptr,
                    gv ? dyGv : nullptr},
        rowsOut);
    if (status = checkLaunch("attention double backward rows"); status.failed())
      return status;
    metart_dtype sumType = kSame ? mm.dtype : acc;
    auto rowOf = [&](const T *t) {
      return GemmOperand{t, keys, false, rows * keys};
    };
    auto columnOf = [&](const T *t) {
      return GemmOperand{t, keys, true, rows * keys};
    };
    // q-bar = (scale S-bar) k + (scale dS) gk.
    if (sums[0]) {
      GemmResult out{sums[0] + qAt, D, S * D};
      status = mm(sumType, group, rows, D, keys, rowOf(rowsOut.sBar),
                  {kb, D, false, K * D}, 0, out);
      if (!status.failed() && gk)
        status = mm(sumType, group, rows, D, keys, rowOf(rowsOut.ds),
                    {gk + b * K * D, D, false, K * D}, 1, out);
    }
    // k-bar += (scale S-bar)^T q + (scale dS)^T gq.
    if (!status.failed() && sums[1]) {
      GemmResult out{sums[1] + b * K * D, D, K * D};
      status = mm(sumType, group, keys, D, rows, columnOf(rowsOut.sBar),
                  {q + qAt, D, false, S * D}, 1, out);
      if (!status.failed() && gq)
        status = mm(sumType, group, keys, D, rows, columnOf(rowsOut.ds),
                    {gq + qAt, D, false, S * D}, 1, out);
    }
    // v-bar += dP-bar^T dy.
    if (!status.failed() && sums[2])
      status =
          mm(sumType, group, keys, E, rows, columnOf(rowsOut.dpBar),
             {dy + yAt, E, false, S * E}, 1, {sums[2] + b * K * E, E, K * E});
    // dy-bar = dP-bar v + P gv.
    if (!status.failed() && sums[3]) {
      GemmResult out{sums[3] + yAt, E, S * E};
      status = mm(sumType, group, rows, E, keys, rowOf(rowsOut.dpBar),
                  {vb, E, false, K * E}, 0, out);
      if (!status.failed() && gv)
        status = mm(sumType, group, rows, E, keys, rowOf(rowsOut.p),
                    {gv + b * K * E, E, false, K * E}, 1, out);
    }
    return status;
  });
  if (walked.failed())
    return walked;
  if constexpr (!kSame)
    for (int i = 0; i < 4; ++i)
      if (outs[i])
        if (KernelStatus status =
                backend.convert(acc, mm.dtype, sizes[i], sums[i], outs[i]);
            status.failed())
          return status;
  return KernelStatus::ok();
}

} // namespace

KernelStatus CudaBackend::attentionDoubleBackward(
    metart_dtype dtype, const AttentionSizes &sizes,
    const AttentionOperands &in, const AttentionCotangents &out) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  ChunkProducts mm(blas, stream.get(), dtype);
  return withDeviceFloat(dtype, [&](auto t) {
    using T = decltype(t);
    return doubleBackwardOf<T>(*this, mm, workspace, sizes, in, out);
  });
}

} // namespace metart::cuda
