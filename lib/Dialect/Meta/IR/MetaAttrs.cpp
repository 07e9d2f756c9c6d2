//===- MetaAttrs.cpp - meta dialect attribute verifiers -------------------===//

#include "metac/Dialect/Meta/IR/MetaAttrs.h"

using namespace mlir;
using namespace metac::meta;

#include "metac/Dialect/Meta/IR/MetaEnums.cpp.inc"

using EmitFn = llvm::function_ref<InFlightDiagnostic()>;

namespace {

double d(const APFloat &value) { return value.convertToDouble(); }

LogicalResult verifyInnerLoop(EmitFn emitError, StringRef name, int64_t steps,
                              double innerLr, int64_t minSteps = 1) {
  if (steps < minSteps)
    return emitError() << name << " expects steps >= " << minSteps << ", got "
                       << steps;
  if (!(innerLr > 0))
    return emitError() << name << " expects inner_lr > 0, got " << innerLr;
  return success();
}

LogicalResult verifyOrder(EmitFn emitError, StringRef name, int64_t order) {
  if (order != 1 && order != 2)
    return emitError() << name << " expects order 1 or 2, got " << order;
  return success();
}

LogicalResult verifyRate(EmitFn emitError, StringRef name, StringRef field,
                         double value) {
  if (!(value > 0))
    return emitError() << name << " expects " << field << " > 0, got " << value;
  return success();
}

LogicalResult verifyUnitInterval(EmitFn emitError, StringRef name,
                                 StringRef field, double value) {
  if (!(value >= 0 && value < 1))
    return emitError() << name << " expects " << field << " in [0, 1), got "
                       << value;
  return success();
}

LogicalResult verifyNonNegative(EmitFn emitError, StringRef name,
                                StringRef field, double value) {
  if (!(value >= 0))
    return emitError() << name << " expects " << field << " >= 0, got "
                       << value;
  return success();
}

LogicalResult verifyAdamLike(EmitFn emitError, StringRef name, double lr,
                             double beta1, double beta2, double eps,
                             double weightDecay) {
  return success(
      succeeded(verifyRate(emitError, name, "lr", lr)) &&
      succeeded(verifyUnitInterval(emitError, name, "beta1", beta1)) &&
      succeeded(verifyUnitInterval(emitError, name, "beta2", beta2)) &&
      succeeded(verifyRate(emitError, name, "eps", eps)) &&
      succeeded(
          verifyNonNegative(emitError, name, "weight_decay", weightDecay)));
}

} // namespace

LogicalResult MAMLAttr::verify(EmitFn emitError, int64_t steps, APFloat innerLr,
                               int64_t order) {
  return success(
      // 0 steps: the meta-gradient is the query loss's gradient at the
      // shared parameters (joint training, the baseline MAML improves on).
      succeeded(verifyInnerLoop(emitError, "maml", steps, d(innerLr),
                                /*minSteps=*/0)) &&
      succeeded(verifyOrder(emitError, "maml", order)));
}

LogicalResult ReptileAttr::verify(EmitFn emitError, int64_t steps,
                                  APFloat innerLr) {
  return verifyInnerLoop(emitError, "reptile", steps, d(innerLr));
}

LogicalResult ANILAttr::verify(EmitFn emitError, int64_t steps, APFloat innerLr,
                               int64_t order, StringRef head) {
  if (failed(verifyInnerLoop(emitError, "anil", steps, d(innerLr))) ||
      failed(verifyOrder(emitError, "anil", order)))
    return failure();
  if (head.empty())
    return emitError() << "anil expects a non-empty head prefix";
  return success();
}

LogicalResult MetaSGDAttr::verify(EmitFn emitError, int64_t steps,
                                  APFloat innerLr, int64_t order) {
  return success(
      succeeded(verifyInnerLoop(emitError, "metasgd", steps, d(innerLr))) &&
      succeeded(verifyOrder(emitError, "metasgd", order)));
}

LogicalResult ProtoNetAttr::verify(EmitFn, Distance) { return success(); }

LogicalResult IMAMLAttr::verify(EmitFn emitError, int64_t steps,
                                APFloat innerLr, APFloat lambda,
                                int64_t cgSteps) {
  if (failed(verifyInnerLoop(emitError, "imaml", steps, d(innerLr))) ||
      failed(verifyRate(emitError, "imaml", "lambda", d(lambda))))
    return failure();
  if (cgSteps < 1)
    return emitError() << "imaml expects cg_steps >= 1, got " << cgSteps;
  return success();
}

LogicalResult SGDAttr::verify(EmitFn emitError, APFloat lr, APFloat momentum,
                              APFloat weightDecay) {
  return success(succeeded(verifyRate(emitError, "sgd", "lr", d(lr))) &&
                 succeeded(verifyUnitInterval(emitError, "sgd", "momentum",
                                              d(momentum))) &&
                 succeeded(verifyNonNegative(emitError, "sgd", "weight_decay",
                                             d(weightDecay))));
}

LogicalResult AdamAttr::verify(EmitFn emitError, APFloat lr, APFloat beta1,
                               APFloat beta2, APFloat eps,
                               APFloat weightDecay) {
  return verifyAdamLike(emitError, "adam", d(lr), d(beta1), d(beta2), d(eps),
                        d(weightDecay));
}

LogicalResult AdamWAttr::verify(EmitFn emitError, APFloat lr, APFloat beta1,
                                APFloat beta2, APFloat eps,
                                APFloat weightDecay) {
  return verifyAdamLike(emitError, "adamw", d(lr), d(beta1), d(beta2), d(eps),
                        d(weightDecay));
}

LogicalResult PlanAttr::verify(EmitFn emitError, int64_t task, int64_t data,
                               int64_t tensor, int64_t pipeline, int64_t expert,
                               int64_t sequence, int64_t microBatches,
                               PipelineSchedule) {
  std::pair<StringRef, int64_t> axes[] = {{"task", task},
                                          {"data", data},
                                          {"tensor", tensor},
                                          {"pipeline", pipeline},
                                          {"expert", expert},
                                          {"sequence", sequence},
                                          {"micro_batches", microBatches}};
  for (auto [name, size] : axes)
    if (size < 1)
      return emitError() << "plan expects " << name << " >= 1, got " << size;
  return success();
}

OptimizerStateLayout metac::meta::getOptimizerStateLayout(Attribute optimizer) {
  if (auto sgd = dyn_cast<SGDAttr>(optimizer))
    return {sgd.getMomentum().isZero() ? 0u : 1u, false};
  return {2, true};
}
