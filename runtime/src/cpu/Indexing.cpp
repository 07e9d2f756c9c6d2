//===- Indexing.cpp - integer-indexed kernels on the CPU ------------------===//
//
// Table lookups, their scatter-add derivative and one-hot encoding. Every
// id or label is checked before anything is written: one out of range is
// METART_ERROR_OUT_OF_RANGE, naming the value, its position and the range.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"

#include <algorithm>
#include <string>
#include <vector>

namespace metart::cpu {

/// Checks that the `count` indices lie in [0, bound); `what` names them.
template <typename I>
static KernelStatus checkRange(const char *what, const I *indices,
                               int64_t count, int64_t bound) {
  for (int64_t s = 0; s < count; ++s)
    if (indices[s] < 0 || indices[s] >= bound)
      return {METART_ERROR_OUT_OF_RANGE,
              std::string(what) + " " + std::to_string(indices[s]) +
                  " at position " + std::to_string(s) +
                  " is out of range [0, " + std::to_string(bound) + ")"};
  return KernelStatus::ok();
}

/// The row of table slice `s / positionsPerSlice` that position `s` names.
template <typename I>
static int64_t rowOf(const LookupSizes &sizes, const I *ids, int64_t s) {
  return (s / sizes.positionsPerSlice) * sizes.rows +
         static_cast<int64_t>(ids[s]);
}

KernelStatus CpuBackend::embedding(metart_dtype dtype, metart_dtype idType,
                                   const LookupSizes &sizes, const void *ids,
                                   const void *table, void *y) {
  return withFloatAndIndex(dtype, idType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    const I *id = static_cast<const I *>(ids);
    KernelStatus status = checkRange("id", id, sizes.positions, sizes.rows);
    if (status.failed())
      return status;
    const T *rows = static_cast<const T *>(table);
    T *out = static_cast<T *>(y);
    for (int64_t s = 0; s < sizes.positions; ++s) {
      const T *row = rows + rowOf(sizes, id, s) * sizes.width;
      std::copy(row, row + sizes.width, out + s * sizes.width);
    }
    return status;
  });
}

KernelStatus CpuBackend::embeddingBackward(metart_dtype dtype,
                                           metart_dtype idType,
                                           const LookupSizes &sizes,
                                           const void *ids, const void *grad,
                                           void *y) {
  return withFloatAndIndex(dtype, idType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    const I *id = static_cast<const I *>(ids);
    KernelStatus status = checkRange("id", id, sizes.positions, sizes.rows);
    if (status.failed())
      return status;
    const T *g = static_cast<const T *>(grad);
    T *table = static_cast<T *>(y);
    std::fill(table, table + sizes.slices * sizes.rows * sizes.width, T(0));
    for (int64_t s = 0; s < sizes.positions; ++s) {
      T *row = table + rowOf(sizes, id, s) * sizes.width;
      const T *in = g + s * sizes.width;
      for (int64_t d = 0; d < sizes.width; ++d)
        row[d] += in[d];
    }
    return status;
  });
}

/// The rank of expert `e` among a token's `experts` probabilities: how
/// many are larger, or equal with a lower index (0: its first choice).
template <typename T>
static int64_t choiceRank(const T *p, int64_t experts, int64_t e) {
  int64_t rank = 0;
  for (int64_t o = 0; o < experts; ++o)
    rank += p[o] > p[e] || (p[o] == p[e] && o < e);
  return rank;
}

KernelStatus CpuBackend::moeDispatch(metart_dtype dtype,
                                     const RoutingSizes &sizes, int64_t topK,
                                     const void *probs, void *y) {
  return withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    const T *p = static_cast<const T *>(probs);
    T *out = static_cast<T *>(y);
    int64_t n = sizes.tokens, e = sizes.experts, c = sizes.capacity;
    std::fill(out, out + sizes.groups * n * e * c, T(0));
    std::vector<int64_t> used(e);
    std::vector<int64_t> choice(n * topK);
    for (int64_t g = 0; g < sizes.groups; ++g) {
      const T *pg = p + g * n * e;
      for (int64_t token = 0; token < n; ++token)
        for (int64_t expert = 0; expert < e; ++expert) {
          int64_t rank = choiceRank(pg + token * e, e, expert);
          if (rank < topK)
            choice[token * topK + rank] = expert;
        }
      std::fill(used.begin(), used.end(), 0);
      // Every first choice before any second choice, tokens in order.
      for (int64_t r = 0; r < topK; ++r)
        for (int64_t token = 0; token < n; ++token) {
          int64_t expert = choice[token * topK + r];
          if (used[expert] < c)
            out[((g * n + token) * e + expert) * c + used[expert]++] = T(1);
        }
    }
    return KernelStatus::ok();
  });
}

KernelStatus CpuBackend::oneHot(metart_dtype dtype, metart_dtype labelType,
                                int64_t count, int64_t classes,
                                const void *labels, void *y) {
  return withFloatAndIndex(dtype, labelType, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    const I *label = static_cast<const I *>(labels);
    KernelStatus status = checkRange("label", label, count, classes);
    if (status.failed())
      return status;
    T *out = static_cast<T *>(y);
    std::fill(out, out + count * classes, T(0));
    for (int64_t s = 0; s < count; ++s)
      out[s * classes + static_cast<int64_t>(label[s])] = T(1);
    return status;
  });
}

} // namespace metart::cpu
