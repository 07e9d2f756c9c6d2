//===- Losses.cpp - checks and dispatch of losses -------------------------===//
//
// `metart_nn_mse_loss`, `metart_nn_cross_entropy_loss` and
// `metart_nn_accuracy`: a mean over every dimension after the leading
// `batch_rank` ones, which the result keeps.
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Widen.h"

using namespace metart;

/// Checks that `batchRank` lies in [0, `maxRank`].
static bool batchRankInRange(Checker &check, int64_t batchRank,
                             int64_t maxRank) {
  if (batchRank >= 0 && batchRank <= maxRank)
    return true;
  return check.reject("batch_rank ", batchRank, " is out of range [0, ",
                      maxRank, "]");
}

metart_status metart_nn_mse_loss(metart_context *context,
                                 const metart_tensor *prediction,
                                 const metart_tensor *target,
                                 int64_t batch_rank, const metart_tensor *y) {
  Checker check(context, "metart_nn_mse_loss");
  if (!check.floatTensor("prediction", prediction) ||
      !check.floatTensor("target", target) || !check.floatTensor("y", y) ||
      !check.sameDtype("target", *target, "prediction", *prediction) ||
      !check.sameDtype("y", *y, "prediction", *prediction))
    return check.result();
  ShapeRef ps = shapeOf(*prediction);
  if (ps != shapeOf(*target))
    return check.invalid("prediction shape ", ps,
                         " does not match target shape ", shapeOf(*target));
  if (!batchRankInRange(check, batch_rank, prediction->rank) ||
      !check.shape("y", *y, ps.takeFront(static_cast<size_t>(batch_rank))) ||
      !check.disjoint("y", *y, "prediction", *prediction) ||
      !check.disjoint("y", *y, "target", *target))
    return check.result();
  LossSizes sizes;
  sizes.entries = numElements(*y);
  sizes.samples = ps.dropFront(static_cast<size_t>(batch_rank)).product();
  sizes.classes = 1;
  Widened w(context, dtypeOf(*prediction));
  const void *pd = w.in(prediction), *td = w.in(target);
  void *yd = w.out(y);
  return check.finish(w.run(
      [&] { return context->backend->mseLoss(w.dtype(), sizes, pd, td, yd); }));
}

/// Checks logits `[B..., N..., C]` against labels `[B..., N...]` and a
/// result `[B...]`, and fills `sizes`: the operands of a classification loss
/// or metric.
static bool checkClassification(Checker &check, const metart_tensor *logits,
                                const metart_tensor *labels, int64_t batch_rank,
                                const metart_tensor *y, LossSizes &sizes) {
  if (!check.floatTensor("logits", logits) ||
      !check.indexTensor("labels", labels) || !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "logits", *logits))
    return false;
  ShapeRef ls = shapeOf(*logits);
  if (ls.empty() || ls.dropBack(1) != shapeOf(*labels)) {
    check.invalid("labels shape ", shapeOf(*labels),
                  " is not the logits shape ", ls,
                  " without its class dimension");
    return false;
  }
  if (!batchRankInRange(check, batch_rank, labels->rank) ||
      !check.shape("y", *y, ls.takeFront(static_cast<size_t>(batch_rank))) ||
      !check.disjoint("y", *y, "logits", *logits) ||
      !check.disjoint("y", *y, "labels", *labels))
    return false;
  sizes.entries = numElements(*y);
  sizes.samples =
      shapeOf(*labels).dropFront(static_cast<size_t>(batch_rank)).product();
  sizes.classes = ls.back();
  return true;
}

metart_status metart_nn_cross_entropy_loss(metart_context *context,
                                           const metart_tensor *logits,
                                           const metart_tensor *labels,
                                           int64_t batch_rank,
                                           const metart_tensor *y) {
  Checker check(context, "metart_nn_cross_entropy_loss");
  LossSizes sizes;
  if (!checkClassification(check, logits, labels, batch_rank, y, sizes))
    return check.result();
  Widened w(context, dtypeOf(*logits));
  const void *ld = w.in(logits);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->crossEntropyLoss(w.dtype(), dtypeOf(*labels),
                                              sizes, ld, labels->data, yd);
  }));
}

metart_status metart_nn_accuracy(metart_context *context,
                                 const metart_tensor *logits,
                                 const metart_tensor *labels,
                                 int64_t batch_rank, const metart_tensor *y) {
  Checker check(context, "metart_nn_accuracy");
  LossSizes sizes;
  if (!checkClassification(check, logits, labels, batch_rank, y, sizes))
    return check.result();
  Widened w(context, dtypeOf(*logits));
  const void *ld = w.in(logits);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->accuracy(w.dtype(), dtypeOf(*labels), sizes, ld,
                                      labels->data, yd);
  }));
}
