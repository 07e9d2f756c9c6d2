//===- Shape.cpp - checks and dispatch of shape kernels and reductions ----===//
//
// `metart_nn_transpose` (result dimension i is input dimension
// permutation[i]), `metart_nn_broadcast` (new dimensions at the sorted
// result positions `dims`) and the reductions over sorted, distinct `dims`.
// Each becomes a strided walk over one of its shapes.
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Widen.h"

using namespace metart;

metart_status metart_nn_transpose(metart_context *context,
                                  const metart_tensor *x,
                                  const int64_t *permutation,
                                  const metart_tensor *y) {
  Checker check(context, "metart_nn_transpose");
  if (!check.floatTensor("x", x) || !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "x", *x))
    return check.result();
  int rank = x->rank;
  if (rank > 0 && !permutation)
    return check.invalid("permutation is null");
  ShapeRef xs = shapeOf(*x), perm(permutation, static_cast<size_t>(rank));
  bool seen[kMaxRank] = {};
  SmallShape expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return check.invalid("permutation ", perm,
                           " is not a permutation of the dimensions of x ",
                           describe(*x));
    seen[p] = true;
    expected.push_back(xs[p]);
  }
  if (!check.shape("y", *y, expected) || !check.disjoint("y", *y, "x", *x))
    return check.result();
  StridedSpace<2> space;
  space.rank = rank;
  int64_t xStrides[kMaxRank];
  rowMajorStrides(xs, xStrides);
  rowMajorStrides(shapeOf(*y), space.stride[0]);
  for (int d = 0; d < rank; ++d) {
    space.size[d] = y->shape[d];
    space.stride[1][d] = xStrides[perm[d]];
  }
  Widened w(context, dtypeOf(*x), context->backend->reducedFloatElementwise());
  const void *source = w.in(x);
  void *result = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->copyStrided(w.dtype(), space, source, result);
  }));
}

metart_status metart_nn_broadcast(metart_context *context,
                                  const metart_tensor *x, const int64_t *dims,
                                  int64_t num_dims, const metart_tensor *y) {
  Checker check(context, "metart_nn_broadcast");
  if (!check.floatTensor("x", x) || !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "x", *x))
    return check.result();
  if (num_dims < 0 || x->rank + num_dims != y->rank)
    return check.invalid("y rank ", y->rank, " is not the rank ", x->rank,
                         " of x plus ", num_dims, " new dimensions");
  if (!check.dimensionList("dimension", dims, num_dims, y->rank))
    return check.result();
  ShapeRef newDims(dims, static_cast<size_t>(num_dims));
  SmallShape kept;
  for (int d = 0; d < y->rank; ++d)
    if (!newDims.contains(d))
      kept.push_back(y->shape[d]);
  if (ShapeRef(kept) != shapeOf(*x))
    return check.invalid("x shape ", shapeOf(*x), " does not match y ",
                         shapeOf(*y), " without the new dimensions ", newDims);
  if (!check.disjoint("y", *y, "x", *x))
    return check.result();
  StridedSpace<2> space;
  space.rank = y->rank;
  int64_t xStrides[kMaxRank];
  rowMajorStrides(shapeOf(*x), xStrides);
  rowMajorStrides(shapeOf(*y), space.stride[0]);
  for (int d = 0, xd = 0; d < y->rank; ++d) {
    space.size[d] = y->shape[d];
    space.stride[1][d] = newDims.contains(d) ? 0 : xStrides[xd++];
  }
  Widened w(context, dtypeOf(*x), context->backend->reducedFloatElementwise());
  const void *source = w.in(x);
  void *result = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->copyStrided(w.dtype(), space, source, result);
  }));
}

/// The sum of `x` over `dims` into `y`, divided by the number of reduced
/// elements with `mean`.
static metart_status reduce(metart_context *context, const char *function,
                            const metart_tensor *x, const int64_t *dims,
                            int64_t num_dims, const metart_tensor *y,
                            bool mean) {
  Checker check(context, function);
  if (!check.floatTensor("x", x) || !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "x", *x) ||
      !check.dimensionList("dimension", dims, num_dims, x->rank))
    return check.result();
  ShapeRef reduced(dims, static_cast<size_t>(num_dims));
  SmallShape expected;
  int64_t count = 1;
  for (int d = 0; d < x->rank; ++d) {
    if (reduced.contains(d))
      count *= x->shape[d];
    else
      expected.push_back(x->shape[d]);
  }
  if (!check.shape("y", *y, expected) || !check.disjoint("y", *y, "x", *x))
    return check.result();
  StridedSpace<2> space;
  space.rank = x->rank;
  int64_t yStrides[kMaxRank];
  rowMajorStrides(shapeOf(*y), yStrides);
  rowMajorStrides(shapeOf(*x), space.stride[0]);
  for (int d = 0, yd = 0; d < x->rank; ++d) {
    space.size[d] = x->shape[d];
    space.stride[1][d] = reduced.contains(d) ? 0 : yStrides[yd++];
  }
  Widened w(context, dtypeOf(*x), context->backend->reducedFloatElementwise());
  const void *source = w.in(x);
  void *result = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->reduceSum(w.dtype(), space, numElements(*y),
                                       mean ? static_cast<double>(count) : 1.0,
                                       source, result);
  }));
}

metart_status metart_nn_reduce_sum(metart_context *context,
                                   const metart_tensor *x, const int64_t *dims,
                                   int64_t num_dims, const metart_tensor *y) {
  return reduce(context, "metart_nn_reduce_sum", x, dims, num_dims, y,
                /*mean=*/false);
}

metart_status metart_nn_reduce_mean(metart_context *context,
                                    const metart_tensor *x, const int64_t *dims,
                                    int64_t num_dims, const metart_tensor *y) {
  return reduce(context, "metart_nn_reduce_mean", x, dims, num_dims, y,
                /*mean=*/true);
}
