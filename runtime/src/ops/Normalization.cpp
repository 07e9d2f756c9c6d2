//===- Normalization.cpp - checks and dispatch of normalisations ----------===//
//
// `metart_nn_batch_norm` (statistics over `reduce_dims`, per index of the
// other dimensions; weight `[P..., C]` whose batch dimensions prefix the
// input's dimensions before the channel), `metart_nn_layer_norm` (over the
// last dimension) and the (log-)softmax along an axis.
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Widen.h"

using namespace metart;

metart_status
metart_nn_batch_norm(metart_context *context, const metart_tensor *x,
                     const metart_tensor *weight, const metart_tensor *bias,
                     int64_t channel_dim, const int64_t *reduce_dims,
                     int64_t num_reduce_dims, double epsilon,
                     const metart_tensor *y) {
  Checker check(context, "metart_nn_batch_norm");
  if (!check.floatTensor("x", x) || !check.floatTensor("weight", weight) ||
      !check.floatTensor("bias", bias) || !check.floatTensor("y", y) ||
      !check.sameDtype("weight", *weight, "x", *x) ||
      !check.sameDtype("bias", *bias, "x", *x) ||
      !check.sameDtype("y", *y, "x", *x))
    return check.result();
  ShapeRef xs = shapeOf(*x), ws = shapeOf(*weight);
  int64_t rank = x->rank;
  if (channel_dim < 0 || channel_dim >= rank)
    return check.invalid("channel dimension ", channel_dim,
                         " is out of range for x ", describe(*x));
  if (!check.dimensionList("reduce dimension", reduce_dims, num_reduce_dims,
                           rank))
    return check.result();
  ShapeRef reduce(reduce_dims, static_cast<size_t>(num_reduce_dims));
  if (reduce.contains(channel_dim))
    return check.invalid("reduce dimensions ", reduce,
                         " must not contain the channel dimension ",
                         channel_dim);
  if (!(epsilon >= 0))
    return check.invalid("expects a non-negative epsilon, got ", epsilon);
  size_t slices = ws.empty() ? 0 : ws.size() - 1;
  ShapeRef leading = xs.takeFront(static_cast<size_t>(channel_dim));
  if (ws.empty() || slices > leading.size() ||
      ws.takeFront(slices) != leading.takeFront(slices) ||
      ws.back() != xs[channel_dim])
    return check.invalid("weight ", describe(*weight),
                         " is not [P..., C] with P a prefix of the input's "
                         "dimensions before channel ",
                         channel_dim, " and C its size (x ", describe(*x), ")");
  if (!check.shape("bias", *bias, ws) || !check.shape("y", *y, xs) ||
      !check.disjoint("y", *y, "x", *x) ||
      !check.disjoint("y", *y, "weight", *weight) ||
      !check.disjoint("y", *y, "bias", *bias))
    return check.result();

  BatchNormSizes sizes;
  StridedSpace<3> &space = sizes.space;
  space.rank = x->rank;
  rowMajorStrides(xs, space.stride[0]);
  int64_t weightStrides[kMaxRank];
  rowMajorStrides(ws, weightStrides);
  // The statistics are row-major over the dimensions that are not reduced.
  int64_t statStride = 1;
  sizes.statistics = 1;
  sizes.count = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    space.size[d] = xs[d];
    if (reduce.contains(d)) {
      space.stride[1][d] = 0;
      sizes.count *= xs[d];
    } else {
      space.stride[1][d] = statStride;
      statStride *= xs[d];
      sizes.statistics *= xs[d];
    }
    space.stride[2][d] = d == channel_dim                   ? 1
                         : d < static_cast<int64_t>(slices) ? weightStrides[d]
                                                            : 0;
  }
  Widened w(context, dtypeOf(*x));
  const void *xd = w.in(x), *wd = w.in(weight), *bd = w.in(bias);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->batchNorm(w.dtype(), sizes, xd, wd, bd, epsilon,
                                       yd);
  }));
}

metart_status metart_nn_layer_norm(metart_context *context,
                                   const metart_tensor *x,
                                   const metart_tensor *weight,
                                   const metart_tensor *bias, double epsilon,
                                   const metart_tensor *y) {
  Checker check(context, "metart_nn_layer_norm");
  if (!check.floatTensor("x", x) || !check.floatTensor("weight", weight) ||
      !check.floatTensor("bias", bias) || !check.floatTensor("y", y) ||
      !check.sameDtype("weight", *weight, "x", *x) ||
      !check.sameDtype("bias", *bias, "x", *x) ||
      !check.sameDtype("y", *y, "x", *x))
    return check.result();
  ShapeRef xs = shapeOf(*x), ws = shapeOf(*weight);
  if (xs.empty())
    return check.invalid("expects x of rank >= 1, got ", describe(*x));
  if (!(epsilon >= 0))
    return check.invalid("expects a non-negative epsilon, got ", epsilon);
  ShapeRef leading = xs.dropBack(1);
  size_t slices = ws.empty() ? 0 : ws.size() - 1;
  if (ws.empty() || slices > leading.size() ||
      ws.takeFront(slices) != leading.takeFront(slices) ||
      ws.back() != xs.back())
    return check.invalid("weight ", describe(*weight),
                         " is not [P..., D] with P a prefix of the input's "
                         "leading dimensions and D its last (x ",
                         describe(*x), ")");
  if (!check.shape("bias", *bias, ws) || !check.shape("y", *y, xs) ||
      !check.disjoint("y", *y, "x", *x) ||
      !check.disjoint("y", *y, "weight", *weight) ||
      !check.disjoint("y", *y, "bias", *bias))
    return check.result();
  LayerNormSizes sizes;
  sizes.rows = leading.product();
  sizes.rowsPerSlice = leading.dropFront(slices).product();
  sizes.width = xs.back();
  Widened w(context, dtypeOf(*x));
  const void *xd = w.in(x), *wd = w.in(weight), *bd = w.in(bias);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->layerNorm(w.dtype(), sizes, xd, wd, bd, epsilon,
                                       yd);
  }));
}

/// The (log-)softmax of `x` along `axis` into `y`.
static metart_status softmax(metart_context *context, const char *function,
                             const metart_tensor *x, int64_t axis,
                             const metart_tensor *y, bool logarithm) {
  Checker check(context, function);
  if (!check.floatTensor("x", x) || !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "x", *x))
    return check.result();
  ShapeRef xs = shapeOf(*x);
  if (axis < 0 || axis >= x->rank)
    return check.invalid("axis ", axis, " is out of range for x ",
                         describe(*x));
  if (!check.shape("y", *y, xs) || !check.disjoint("y", *y, "x", *x))
    return check.result();
  AxisSizes sizes;
  sizes.outer = xs.takeFront(static_cast<size_t>(axis)).product();
  sizes.axis = xs[axis];
  sizes.inner = xs.dropFront(static_cast<size_t>(axis) + 1).product();
  Widened w(context, dtypeOf(*x));
  const void *xd = w.in(x);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->softmax(w.dtype(), sizes, logarithm, xd, yd);
  }));
}

metart_status metart_nn_softmax(metart_context *context, const metart_tensor *x,
                                int64_t axis, const metart_tensor *y) {
  return softmax(context, "metart_nn_softmax", x, axis, y,
                 /*logarithm=*/false);
}

metart_status metart_nn_log_softmax(metart_context *context,
                                    const metart_tensor *x, int64_t axis,
                                    const metart_tensor *y) {
  return softmax(context, "metart_nn_log_softmax", x, axis, y,
                 /*logarithm=*/true);
}
