//===- Indexing.cpp - checks and dispatch of integer-indexed kernels ------===//
//
// `metart_nn_embedding` (ids `[S...]` into a table `[P..., V, D]` whose
// batch dimensions prefix `S...`), its scatter-add derivative, and
// `metart_nn_one_hot`. Ids and labels are checked against their range by
// the backend, which sees their values: METART_ERROR_OUT_OF_RANGE.
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Widen.h"

using namespace metart;

/// Checks a lookup of `ids` in a table of shape `table` (named
/// `tableName`) and computes its sizes and the shape `[S..., D]` of the
/// looked-up rows.
static bool lookup(Checker &check, const metart_tensor &ids,
                   const char *tableName, const metart_tensor &table,
                   LookupSizes &sizes, SmallShape &rows) {
  ShapeRef is = shapeOf(ids), ts = shapeOf(table);
  if (ts.size() < 2)
    return check.reject("expects ", tableName,
                        " of rank >= 2 ([..., V, D]), got ", describe(table));
  size_t slices = ts.size() - 2;
  if (slices > is.size() || ts.takeFront(slices) != is.takeFront(slices))
    return check.reject(tableName, " batch dimensions ", ts.takeFront(slices),
                        " are not a prefix of the ids' dimensions ", is);
  sizes.positions = is.product();
  sizes.slices = ts.takeFront(slices).product();
  sizes.positionsPerSlice = is.dropFront(slices).product();
  sizes.rows = ts[ts.size() - 2];
  sizes.width = ts.back();
  rows = SmallShape(is);
  rows.push_back(sizes.width);
  return true;
}

metart_status metart_nn_embedding(metart_context *context,
                                  const metart_tensor *ids,
                                  const metart_tensor *table,
                                  const metart_tensor *y) {
  Checker check(context, "metart_nn_embedding");
  LookupSizes sizes;
  SmallShape rows;
  if (!check.indexTensor("ids", ids) || !check.floatTensor("table", table) ||
      !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "table", *table) ||
      !lookup(check, *ids, "table", *table, sizes, rows) ||
      !check.shape("y", *y, rows) || !check.disjoint("y", *y, "ids", *ids) ||
      !check.disjoint("y", *y, "table", *table))
    return check.result();
  Widened w(context, dtypeOf(*table));
  const void *td = w.in(table);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->embedding(w.dtype(), dtypeOf(*ids), sizes,
                                       ids->data, td, yd);
  }));
}

metart_status metart_nn_embedding_backward(metart_context *context,
                                           const metart_tensor *ids,
                                           const metart_tensor *grad,
                                           const metart_tensor *y) {
  Checker check(context, "metart_nn_embedding_backward");
  LookupSizes sizes;
  SmallShape rows;
  if (!check.indexTensor("ids", ids) || !check.floatTensor("grad", grad) ||
      !check.floatTensor("y", y) || !check.sameDtype("y", *y, "grad", *grad) ||
      !lookup(check, *ids, "y", *y, sizes, rows) ||
      !check.shape("grad", *grad, rows) ||
      !check.disjoint("y", *y, "ids", *ids) ||
      !check.disjoint("y", *y, "grad", *grad))
    return check.result();
  Widened w(context, dtypeOf(*grad));
  const void *gd = w.in(grad);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->embeddingBackward(w.dtype(), dtypeOf(*ids), sizes,
                                               ids->data, gd, yd);
  }));
}

metart_status metart_nn_moe_dispatch(metart_context *context,
                                     const metart_tensor *probs, int64_t top_k,
                                     const metart_tensor *y) {
  Checker check(context, "metart_nn_moe_dispatch");
  if (!check.floatTensor("probs", probs) || !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "probs", *probs))
    return check.result();
  ShapeRef ps = shapeOf(*probs), ys = shapeOf(*y);
  if (ps.size() < 2)
    return check.invalid("probs ", describe(*probs),
                         " is not [..., tokens, experts]");
  if (ys.empty() || ys.dropBack(1) != ps || ys.back() < 1)
    return check.invalid("y shape ", ys, " is not the probs shape ", ps,
                         " plus a capacity dimension");
  if (top_k < 1 || top_k > ps.back())
    return check.invalid("top_k ", top_k, " is not in [1, ", ps.back(),
                         "] (the experts)");
  if (!check.disjoint("y", *y, "probs", *probs))
    return check.result();
  RoutingSizes sizes;
  sizes.experts = ps.back();
  sizes.tokens = ps[ps.size() - 2];
  sizes.groups = ps.dropBack(2).product();
  sizes.capacity = ys.back();
  Widened w(context, dtypeOf(*probs));
  const void *pd = w.in(probs);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->moeDispatch(w.dtype(), sizes, top_k, pd, yd);
  }));
}

metart_status metart_nn_one_hot(metart_context *context,
                                const metart_tensor *labels,
                                const metart_tensor *y) {
  Checker check(context, "metart_nn_one_hot");
  if (!check.indexTensor("labels", labels) || !check.floatTensor("y", y))
    return check.result();
  ShapeRef ys = shapeOf(*y);
  if (ys.empty() || ys.dropBack(1) != shapeOf(*labels))
    return check.invalid("y shape ", ys, " is not the labels shape ",
                         shapeOf(*labels), " plus a class dimension");
  if (!check.disjoint("y", *y, "labels", *labels))
    return check.result();
  Widened w(context, dtypeOf(*y));
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->oneHot(w.dtype(), dtypeOf(*labels),
                                    numElements(*labels), ys.back(),
                                    labels->data, yd);
  }));
}
