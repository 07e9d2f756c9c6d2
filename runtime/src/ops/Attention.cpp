//===- Attention.cpp - metart_nn_attention --------------------------------===//
//
// Checks the operands of fused attention and hands it to the backend (16-bit
// operands through f32 copies, as every kernel).
//
//===----------------------------------------------------------------------===//

#include "../Context.h"
#include "Widen.h"

#include <cmath>

using namespace metart;

metart_status metart_nn_attention(metart_context *context,
                                  const metart_tensor *q,
                                  const metart_tensor *k,
                                  const metart_tensor *v, double scale,
                                  int causal, const metart_tensor *y) {
  Checker check(context, "metart_nn_attention");
  if (!check.floatTensor("q", q) || !check.floatTensor("k", k) ||
      !check.floatTensor("v", v) || !check.floatTensor("y", y) ||
      !check.sameDtype("k", *k, "q", *q) ||
      !check.sameDtype("v", *v, "q", *q) || !check.sameDtype("y", *y, "q", *q))
    return check.result();
  ShapeRef qs = shapeOf(*q), ks = shapeOf(*k), vs = shapeOf(*v);
  size_t r = qs.size();
  if (r < 2 || ks.size() != r || vs.size() != r)
    return check.invalid("expects q, k and v of one rank >= 2, got ", qs, ", ",
                         ks, " and ", vs);
  if (qs.dropBack(2) != ks.dropBack(2) || qs.dropBack(2) != vs.dropBack(2))
    return check.invalid("batch dimensions differ: ", qs, ", ", ks, " and ",
                         vs);
  if (qs[r - 1] != ks[r - 1] || ks[r - 2] != vs[r - 2])
    return check.invalid("q ", qs, ", k ", ks, " and v ", vs,
                         " do not fit: q and k need one width, k and v one "
                         "length");
  if (causal && qs[r - 2] != ks[r - 2])
    return check.invalid("causal attention needs as many queries as keys, "
                         "got ",
                         qs[r - 2], " and ", ks[r - 2]);
  if (!std::isfinite(scale))
    return check.invalid("expects a finite scale, got ", scale);
  AttentionSizes sizes{qs.dropBack(2).product(),
                       qs[r - 2],
                       ks[r - 2],
                       qs[r - 1],
                       vs[r - 1],
                       scale,
                       causal != 0};
  SmallShape expected(qs.dropBack(1));
  expected.push_back(vs[r - 1]);
  if (!check.shape("y", *y, expected) || !check.disjoint("y", *y, "q", *q) ||
      !check.disjoint("y", *y, "k", *k) || !check.disjoint("y", *y, "v", *v))
    return check.result();
  Widened w(context, dtypeOf(*q));
  const void *qd = w.in(q), *kd = w.in(k), *vd = w.in(v);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->attention(w.dtype(), sizes, qd, kd, vd, yd);
  }));
}
