//===- Attention.cpp - metart_nn_attention and its derivatives ------------===//
//
// Checks the operands of fused attention and of its two derivatives and
// hands them to the backend (16-bit operands as they are where the backend
// computes on them, CUDA's; else through f32 copies, as every kernel).
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "../comm/KeyRings.h"
#include "../comm/Stats.h"
#include "Widen.h"
#include "metart/comm.h"

#include <cmath>
#include <tuple>

using namespace metart;

namespace {

/// The sizes of attention of q over k and v, checked as the forward and the
/// backward need; false (with the error in `check`) when they do not fit.
bool attentionSizes(Checker &check, const metart_tensor *q,
                    const metart_tensor *k, const metart_tensor *v,
                    double scale, int causal, AttentionSizes &sizes) {
  if (!check.floatTensor("q", q) || !check.floatTensor("k", k) ||
      !check.floatTensor("v", v) || !check.sameDtype("k", *k, "q", *q) ||
      !check.sameDtype("v", *v, "q", *q))
    return false;
  ShapeRef qs = shapeOf(*q), ks = shapeOf(*k), vs = shapeOf(*v);
  size_t r = qs.size();
  if (r < 2 || ks.size() != r || vs.size() != r)
    return check.reject("expects q, k and v of one rank >= 2, got ", qs, ", ",
                        ks, " and ", vs);
  if (qs.dropBack(2) != ks.dropBack(2) || qs.dropBack(2) != vs.dropBack(2))
    return check.reject("batch dimensions differ: ", qs, ", ", ks, " and ", vs);
  if (qs[r - 1] != ks[r - 1] || ks[r - 2] != vs[r - 2])
    return check.reject("q ", qs, ", k ", ks, " and v ", vs,
                        " do not fit: q and k need one width, k and v one "
                        "length");
  if (causal && qs[r - 2] != ks[r - 2])
    return check.reject("causal attention needs as many queries as keys, "
                        "got ",
                        qs[r - 2], " and ", ks[r - 2]);
  if (!std::isfinite(scale))
    return check.reject("expects a finite scale, got ", scale);
  sizes = AttentionSizes{qs.dropBack(2).product(),
                         qs[r - 2],
                         ks[r - 2],
                         qs[r - 1],
                         vs[r - 1],
                         scale,
                         causal != 0};
  return true;
}

/// The shape of attention's output y: q's with v's width.
SmallShape outputShape(const metart_tensor &q, const metart_tensor &v) {
  SmallShape shape(shapeOf(q).dropBack(1));
  shape.push_back(shapeOf(v).back());
  return shape;
}

} // namespace

namespace {

/// The ring of `mask`'s group (a ring of one for plain attention), or null
/// with the error in `check` when `mask` is not a group's.
std::unique_ptr<KeyRing> ringOf(Checker &check, metart_context *context,
                                int32_t mask) {
  if (mask < 0 || mask >= comm::kNumMasks) {
    check.reject("axes mask ", mask, " is not in [0, ", comm::kNumMasks - 1,
                 "]");
    return nullptr;
  }
  return comm::keyRingOf(context, mask);
}

metart_status attention(const char *name, metart_context *context,
                        const metart_tensor *q, const metart_tensor *k,
                        const metart_tensor *v, double scale, int causal,
                        int32_t mask, const metart_tensor *y) {
  Checker check(context, name);
  AttentionSizes sizes;
  std::unique_ptr<KeyRing> ring = ringOf(check, context, mask);
  if (!ring || !attentionSizes(check, q, k, v, scale, causal, sizes) ||
      !check.floatTensor("y", y) || !check.sameDtype("y", *y, "q", *q) ||
      !check.shape("y", *y, outputShape(*q, *v)) ||
      !check.disjoint("y", *y, "q", *q) || !check.disjoint("y", *y, "k", *k) ||
      !check.disjoint("y", *y, "v", *v))
    return check.result();
  Widened w(context, dtypeOf(*q), context->backend->reducedFloatProducts());
  const void *qd = w.in(q), *kd = w.in(k), *vd = w.in(v);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    Backend &backend = *context->backend;
    return ring->size() == 1
               ? backend.attention(w.dtype(), sizes, qd, kd, vd, yd)
               : backend.ringAttention(w.dtype(), sizes, qd, kd, vd, yd, *ring);
  }));
}

metart_status attentionBackward(const char *name, metart_context *context,
                                const metart_tensor *q, const metart_tensor *k,
                                const metart_tensor *v, const metart_tensor *dy,
                                double scale, int causal, int32_t mask,
                                const metart_tensor *dq,
                                const metart_tensor *dk,
                                const metart_tensor *dv) {
  Checker check(context, name);
  AttentionSizes sizes;
  std::unique_ptr<KeyRing> ring = ringOf(check, context, mask);
  if (!ring || !attentionSizes(check, q, k, v, scale, causal, sizes))
    return check.result();
  if (!dq && !dk && !dv)
    return check.invalid("asks for none of dq, dk and dv");
  SmallShape output = outputShape(*q, *v);
  if (!check.floatTensor("dy", dy) || !check.sameDtype("dy", *dy, "q", *q) ||
      !check.shape("dy", *dy, output))
    return check.result();
  const metart_tensor *reads[] = {q, k, v, dy};
  const char *readNames[] = {"q", "k", "v", "dy"};
  for (auto [name, t, like] : {std::tuple{"dq", dq, q}, std::tuple{"dk", dk, k},
                               std::tuple{"dv", dv, v}}) {
    if (!t)
      continue;
    if (!check.floatTensor(name, t) || !check.sameDtype(name, *t, "q", *q) ||
        !check.shape(name, *t, shapeOf(*like)))
      return check.result();
    for (int i = 0; i < 4; ++i)
      if (!check.disjoint(name, *t, readNames[i], *reads[i]))
        return check.result();
  }
  Widened w(context, dtypeOf(*q), context->backend->reducedFloatProducts());
  const void *qd = w.in(q), *kd = w.in(k), *vd = w.in(v), *dyd = w.in(dy);
  void *dqd = w.out(dq), *dkd = w.out(dk), *dvd = w.out(dv);
  return check.finish(w.run([&] {
    Backend &backend = *context->backend;
    return ring->size() == 1
               ? backend.attentionBackward(w.dtype(), sizes, qd, kd, vd, dyd,
                                           dqd, dkd, dvd)
               : backend.ringAttentionBackward(w.dtype(), sizes, qd, kd, vd,
                                               dyd, dqd, dkd, dvd, *ring);
  }));
}

metart_status attentionDoubleBackward(
    const char *name, metart_context *context, const metart_tensor *q,
    const metart_tensor *k, const metart_tensor *v, const metart_tensor *dy,
    const metart_tensor *gq, const metart_tensor *gk, const metart_tensor *gv,
    double scale, int causal, int32_t mask, const metart_tensor *q_bar,
    const metart_tensor *k_bar, const metart_tensor *v_bar,
    const metart_tensor *dy_bar) {
  Checker check(context, name);
  AttentionSizes sizes;
  std::unique_ptr<KeyRing> ring = ringOf(check, context, mask);
  if (!ring || !attentionSizes(check, q, k, v, scale, causal, sizes))
    return check.result();
  if (!gq && !gk && !gv)
    return check.invalid("is given none of gq, gk and gv");
  if (!q_bar && !k_bar && !v_bar && !dy_bar)
    return check.invalid("asks for none of q_bar, k_bar, v_bar and dy_bar");
  if (!check.floatTensor("dy", dy) || !check.sameDtype("dy", *dy, "q", *q) ||
      !check.shape("dy", *dy, outputShape(*q, *v)))
    return check.result();
  // Each cotangent has its operand's shape.
  auto shaped = [&](const char *name, const metart_tensor *t,
                    const metart_tensor *like) {
    return !t ||
           (check.floatTensor(name, t) && check.sameDtype(name, *t, "q", *q) &&
            check.shape(name, *t, shapeOf(*like)));
  };
  if (!shaped("gq", gq, q) || !shaped("gk", gk, k) || !shaped("gv", gv, v))
    return check.result();
  const metart_tensor *reads[] = {q, k, v, dy, gq, gk, gv};
  const char *readNames[] = {"q", "k", "v", "dy", "gq", "gk", "gv"};
  for (auto [name, t, like] :
       {std::tuple{"q_bar", q_bar, q}, std::tuple{"k_bar", k_bar, k},
        std::tuple{"v_bar", v_bar, v}, std::tuple{"dy_bar", dy_bar, dy}}) {
    if (!shaped(name, t, like))
      return check.result();
    for (int i = 0; t && i < 7; ++i)
      if (reads[i] && !check.disjoint(name, *t, readNames[i], *reads[i]))
        return check.result();
  }
  Widened w(context, dtypeOf(*q), context->backend->reducedFloatProducts());
  AttentionOperands in{w.in(q),  w.in(k),  w.in(v), w.in(dy),
                       w.in(gq), w.in(gk), w.in(gv)};
  AttentionCotangents out{w.out(q_bar), w.out(k_bar), w.out(v_bar),
                          w.out(dy_bar)};
  return check.finish(w.run([&] {
    Backend &backend = *context->backend;
    return ring->size() == 1
               ? backend.attentionDoubleBackward(w.dtype(), sizes, in, out)
               : backend.ringAttentionDoubleBackward(w.dtype(), sizes, in, out,
                                                     *ring);
  }));
}

} // namespace

metart_status metart_nn_attention(metart_context *context,
                                  const metart_tensor *q,
                                  const metart_tensor *k,
                                  const metart_tensor *v, double scale,
                                  int causal, const metart_tensor *y) {
  return attention("metart_nn_attention", context, q, k, v, scale, causal, 0,
                   y);
}

metart_status metart_nn_ring_attention(metart_context *context,
                                       const metart_tensor *q,
                                       const metart_tensor *k,
                                       const metart_tensor *v, double scale,
                                       int causal, int32_t axes_mask,
                                       const metart_tensor *y) {
  return attention("metart_nn_ring_attention", context, q, k, v, scale, causal,
                   axes_mask, y);
}

metart_status metart_nn_attention_backward(
    metart_context *context, const metart_tensor *q, const metart_tensor *k,
    const metart_tensor *v, const metart_tensor *dy, double scale, int causal,
    const metart_tensor *dq, const metart_tensor *dk, const metart_tensor *dv) {
  return attentionBackward("metart_nn_attention_backward", context, q, k, v, dy,
                           scale, causal, 0, dq, dk, dv);
}

metart_status metart_nn_ring_attention_backward(
    metart_context *context, const metart_tensor *q, const metart_tensor *k,
    const metart_tensor *v, const metart_tensor *dy, double scale, int causal,
    int32_t axes_mask, const metart_tensor *dq, const metart_tensor *dk,
    const metart_tensor *dv) {
  return attentionBackward("metart_nn_ring_attention_backward", context, q, k,
                           v, dy, scale, causal, axes_mask, dq, dk, dv);
}

metart_status metart_nn_attention_double_backward(
    metart_context *context, const metart_tensor *q, const metart_tensor *k,
    const metart_tensor *v, const metart_tensor *dy, const metart_tensor *gq,
    const metart_tensor *gk, const metart_tensor *gv, double scale, int causal,
    const metart_tensor *q_bar, const metart_tensor *k_bar,
    const metart_tensor *v_bar, const metart_tensor *dy_bar) {
  return attentionDoubleBackward("metart_nn_attention_double_backward", context,
                                 q, k, v, dy, gq, gk, gv, scale, causal, 0,
                                 q_bar, k_bar, v_bar, dy_bar);
}

metart_status metart_nn_ring_attention_double_backward(
    metart_context *context, const metart_tensor *q, const metart_tensor *k,
    const metart_tensor *v, const metart_tensor *dy, const metart_tensor *gq,
    const metart_tensor *gk, const metart_tensor *gv, double scale, int causal,
    int32_t axes_mask, const metart_tensor *q_bar, const metart_tensor *k_bar,
    const metart_tensor *v_bar, const metart_tensor *dy_bar) {
  return attentionDoubleBackward(
      "metart_nn_ring_attention_double_backward", context, q, k, v, dy, gq, gk,
      gv, scale, causal, axes_mask, q_bar, k_bar, v_bar, dy_bar);
}
