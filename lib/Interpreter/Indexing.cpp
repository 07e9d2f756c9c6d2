//===- Indexing.cpp - integer-indexed ops in the interpreter --------------===//
//
// `nn.one_hot`, `nn.embedding` (a row lookup in a table batched over a prefix
// of the ids' dimensions) and `nn.embedding_backward` (its scatter-add).
// Indices out of range are runtime errors reported at the op.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

using namespace mlir;

namespace metac::interp::detail {

FailureOr<Tensor> evaluateOp(nn::OneHotOp op, const Frame &frame) {
  const Tensor &labels = frame.get(op.getLabels());
  Tensor y = zeros(shapeOf(op.getResult()));
  int64_t classes = y.shape.back();
  for (int64_t s = 0, e = labels.numElements(); s < e; ++s) {
    if (failed(checkIndex(op, "label", labels.ints[s], classes)))
      return failure();
    y.values[s * classes + labels.ints[s]] = 1.0;
  }
  return y;
}

FailureOr<Tensor> evaluateOp(nn::MoeDispatchOp op, const Frame &frame) {
  // The reference: each token's experts sorted by probability (stable: the
  // lower index first among equals), its first top_k taken; slots filled
  // choice rank by choice rank, tokens in order.
  const Tensor &probs = frame.get(op.getProbs());
  Tensor y = zeros(shapeOf(op.getResult()));
  int64_t capacity = y.shape.back(), experts = probs.shape.back();
  int64_t tokens = probs.shape[probs.shape.size() - 2];
  int64_t groups = probs.numElements() / (tokens * experts);
  int64_t k = op.getTopK();
  for (int64_t g = 0; g < groups; ++g) {
    std::vector<std::vector<int64_t>> ranked(tokens);
    for (int64_t n = 0; n < tokens; ++n) {
      const double *p = probs.values.data() + (g * tokens + n) * experts;
      std::vector<int64_t> order(experts);
      for (int64_t e = 0; e < experts; ++e)
        order[e] = e;
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return p[a] > p[b]; });
      ranked[n].assign(order.begin(), order.begin() + k);
    }
    std::vector<int64_t> used(experts, 0);
    for (int64_t r = 0; r < k; ++r)
      for (int64_t n = 0; n < tokens; ++n) {
        int64_t e = ranked[n][r];
        if (used[e] < capacity)
          y.values[((g * tokens + n) * experts + e) * capacity + used[e]++] =
              1.0;
      }
  }
  return y;
}

namespace {
/// The sizes of a lookup of ids `[S...]` in a table `[P..., V, D]`.
struct LookupGeometry {
  /// The product of S..., and of the S dimensions after P (the positions
  /// that share one table slice).
  int64_t positions, positionsPerTable;
  int64_t rows, width;
};
} // namespace

static LookupGeometry geometry(ArrayRef<int64_t> ids, ArrayRef<int64_t> table) {
  LookupGeometry g;
  g.positions = product(ids);
  g.positionsPerTable = product(ids.drop_front(table.size() - 2));
  g.rows = table[table.size() - 2];
  g.width = table.back();
  return g;
}

FailureOr<Tensor> evaluateOp(nn::EmbeddingOp op, const Frame &frame) {
  const Tensor &ids = frame.get(op.getIds());
  const Tensor &table = frame.get(op.getTable());
  Tensor y = zeros(shapeOf(op.getResult()));
  LookupGeometry g = geometry(ids.shape, table.shape);
  for (int64_t s = 0; s < g.positions; ++s) {
    int64_t id = ids.ints[s];
    if (failed(checkIndex(op, "id", id, g.rows)))
      return failure();
    int64_t row = (s / g.positionsPerTable) * g.rows + id;
    for (int64_t d = 0; d < g.width; ++d)
      y.values[s * g.width + d] = table.values[row * g.width + d];
  }
  return y;
}

FailureOr<Tensor> evaluateOp(nn::EmbeddingBackwardOp op, const Frame &frame) {
  const Tensor &ids = frame.get(op.getIds());
  const Tensor &grad = frame.get(op.getGrad());
  Tensor table = zeros(shapeOf(op.getResult()));
  LookupGeometry g = geometry(ids.shape, table.shape);
  for (int64_t s = 0; s < g.positions; ++s) {
    int64_t id = ids.ints[s];
    if (failed(checkIndex(op, "id", id, g.rows)))
      return failure();
    int64_t row = (s / g.positionsPerTable) * g.rows + id;
    for (int64_t d = 0; d < g.width; ++d)
      table.values[row * g.width + d] += grad.values[s * g.width + d];
  }
  return table;
}

} // namespace metac::interp::detail
