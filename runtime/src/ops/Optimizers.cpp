//===- Optimizers.cpp - checks and dispatch of optimizer updates ----------===//
//
// `metart_sgd_update` and `metart_adam_update`: the parameter and its state
// are updated in place; gradient and state have the parameter's shape and
// element type and none of them overlaps another. Hyperparameters are
// checked as torch.optim checks them.
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Widen.h"

#include <cmath>
#include <vector>

using namespace metart;

/// Checks that the optional `state` tensors (named in `names`) are float
/// tensors like `param`, and that `param`, `grad` and the states are
/// pairwise disjoint.
static bool sameAsParam(Checker &check, const metart_tensor &param,
                        const metart_tensor &grad,
                        const metart_tensor *const *states,
                        const char *const *names, int count) {
  if (!check.sameDtype("grad", grad, "param", param) ||
      !check.shape("grad", grad, shapeOf(param)) ||
      !check.disjoint("param", param, "grad", grad))
    return false;
  for (int i = 0; i < count; ++i) {
    if (!check.floatTensor(names[i], states[i]) ||
        !check.sameDtype(names[i], *states[i], "param", param) ||
        !check.shape(names[i], *states[i], shapeOf(param)) ||
        !check.disjoint(names[i], *states[i], "param", param) ||
        !check.disjoint(names[i], *states[i], "grad", grad))
      return false;
    for (int j = 0; j < i; ++j)
      if (!check.disjoint(names[i], *states[i], names[j], *states[j]))
        return false;
  }
  return true;
}

/// Checks that `t` is an i64 scalar (a step count).
static bool stepCount(Checker &check, const char *name,
                      const metart_tensor *t) {
  if (!check.tensor(name, t))
    return false;
  if (t->dtype != METART_I64 || numElements(*t) != 1)
    return check.reject(name, " must be one i64 element, got ", describe(*t));
  return true;
}

/// Checks that `t` is null or an f64 tensor of `size` elements (a gate or
/// the guard's norms).
static bool guardVector(Checker &check, const char *name,
                        const metart_tensor *t, int64_t size, bool optional) {
  if (!t && optional)
    return true;
  if (!check.tensor(name, t))
    return false;
  if (t->dtype != METART_F64 || t->rank != 1 || numElements(*t) != size)
    return check.reject(name, " must be f64 [", size, "], got ", describe(*t));
  return true;
}

static const double *gateOf(const metart_tensor *gate) {
  return gate ? static_cast<const double *>(gate->data) : nullptr;
}

metart_status metart_update_guard(metart_context *context,
                                  const metart_tensor *loss,
                                  const metart_tensor *const *grads,
                                  int64_t count, double clip_norm,
                                  const metart_tensor *norms,
                                  const metart_tensor *gate) {
  Checker check(context, "metart_update_guard");
  if (!check.floatTensor("loss", loss))
    return check.result();
  if (numElements(*loss) != 1)
    return check.invalid("loss must be one element, got ", describe(*loss));
  // Mixed precision keeps f32 master weights: their gradients are f32.
  if (isReducedFloat(loss->dtype))
    return check.invalid("expects an f32 or f64 loss (the meta-loss of f32 "
                         "master weights), got ",
                         describe(*loss));
  if (count < 1 || !grads)
    return check.invalid("expects at least one gradient, got ", count);
  if (!(clip_norm >= 0) || std::isinf(clip_norm))
    return check.invalid("expects a finite clip_norm >= 0, got ", clip_norm);
  std::vector<const void *> data(count);
  std::vector<int64_t> sizes(count);
  for (int64_t i = 0; i < count; ++i) {
    if (!check.floatTensor("gradient", grads[i]) ||
        (i && !check.sameDtype("gradient", *grads[i], "the first gradient",
                               *grads[0])))
      return check.result();
    if (isReducedFloat(grads[i]->dtype))
      return check.invalid("expects f32 or f64 gradients (of f32 master "
                           "weights), got ",
                           describe(*grads[i]));
    data[i] = grads[i]->data;
    sizes[i] = numElements(*grads[i]);
  }
  if (!guardVector(check, "norms", norms, count, false) ||
      !guardVector(check, "gate", gate, 2, false) ||
      !check.disjoint("norms", *norms, "gate", *gate))
    return check.result();
  GuardInputs inputs{
      count,      data.data(),    sizes.data(), dtypeOf(*grads[0]),
      loss->data, dtypeOf(*loss), clip_norm};
  return check.finish(
      context->backend->updateGuard(inputs, static_cast<double *>(norms->data),
                                    static_cast<double *>(gate->data)));
}

metart_status metart_increment(metart_context *context,
                               const metart_tensor *counter,
                               const metart_tensor *gate) {
  Checker check(context, "metart_increment");
  if (!stepCount(check, "counter", counter) ||
      !guardVector(check, "gate", gate, 2, true))
    return check.result();
  return check.finish(context->backend->increment(
      static_cast<int64_t *>(counter->data), gateOf(gate)));
}

metart_status metart_sgd_update(metart_context *context,
                                const metart_tensor *param,
                                const metart_tensor *grad,
                                const metart_tensor *momentum_buffer, double lr,
                                double momentum, double weight_decay,
                                const metart_tensor *gate) {
  Checker check(context, "metart_sgd_update");
  if (!check.floatTensor("param", param) || !check.floatTensor("grad", grad) ||
      !guardVector(check, "gate", gate, 2, true))
    return check.result();
  if (!(lr >= 0) || !(momentum >= 0) || !(weight_decay >= 0))
    return check.invalid("expects a non-negative lr, momentum and "
                         "weight_decay, got ",
                         lr, ", ", momentum, " and ", weight_decay);
  if (momentum != 0 && !momentum_buffer)
    return check.invalid("momentum ", momentum,
                         " needs a momentum_buffer, got null");
  const metart_tensor *states[] = {momentum_buffer};
  const char *names[] = {"momentum_buffer"};
  if (!sameAsParam(check, *param, *grad, states, names, momentum != 0 ? 1 : 0))
    return check.result();
  SgdOptions options{lr, momentum, weight_decay, gateOf(gate)};
  Widened w(context, dtypeOf(*param));
  void *pd = w.inOut(param);
  const void *gd = w.in(grad);
  void *md = momentum != 0 ? w.inOut(momentum_buffer) : nullptr;
  return check.finish(w.run([&] {
    return context->backend->sgdUpdate(w.dtype(), numElements(*param), pd, gd,
                                       md, options);
  }));
}

metart_status
metart_adam_update(metart_context *context, const metart_tensor *param,
                   const metart_tensor *grad, const metart_tensor *exp_avg,
                   const metart_tensor *exp_avg_sq, const metart_tensor *step,
                   double lr, double beta1, double beta2, double eps,
                   double weight_decay, int decoupled,
                   const metart_tensor *gate) {
  Checker check(context, "metart_adam_update");
  if (!check.floatTensor("param", param) || !check.floatTensor("grad", grad) ||
      !guardVector(check, "gate", gate, 2, true))
    return check.result();
  if (!stepCount(check, "step", step))
    return check.result();
  // Host memory can be read here; a device reads the count in its kernel.
  // (A skipped update has not counted its step.)
  bool host = context->backend->hostMemory();
  bool skipped =
      host && gate && static_cast<const double *>(gate->data)[0] == 0;
  if (host && !skipped && *static_cast<const int64_t *>(step->data) < 1)
    return check.invalid("step ", *static_cast<const int64_t *>(step->data),
                         " is not a 1-based step number");
  if (!(lr >= 0) || !(eps >= 0) || !(weight_decay >= 0))
    return check.invalid("expects a non-negative lr, eps and weight_decay, "
                         "got ",
                         lr, ", ", eps, " and ", weight_decay);
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
    return check.invalid("expects betas in [0, 1), got ", beta1, " and ",
                         beta2);
  const metart_tensor *states[] = {exp_avg, exp_avg_sq};
  const char *names[] = {"exp_avg", "exp_avg_sq"};
  if (!sameAsParam(check, *param, *grad, states, names, 2))
    return check.result();
  AdamOptions options{static_cast<const int64_t *>(step->data),
                      lr,
                      beta1,
                      beta2,
                      eps,
                      weight_decay,
                      decoupled != 0,
                      gateOf(gate)};
  Widened w(context, dtypeOf(*param));
  void *pd = w.inOut(param);
  const void *gd = w.in(grad);
  void *m1 = w.inOut(exp_avg), *m2 = w.inOut(exp_avg_sq);
  return check.finish(w.run([&] {
    return context->backend->adamUpdate(w.dtype(), numElements(*param), pd, gd,
                                        m1, m2, options);
  }));
}
