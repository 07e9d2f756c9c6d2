//===- Health.h - the verdict on each meta-iteration's update ---*- C++ -*-===//
//
// A guarded step (meta.update_guard) returns, after its meta-loss, the
// squared norm of each outer gradient; its update already was a no-op on
// the device when one of them or the loss was not finite. The driver reads
// the norms with the loss, in one copy (the loss lives right after the
// norms), where it synchronises anyway, and decides: with a
// mesh, one all-reduce of the verdict makes every rank take the same one
// (the guard sees reduced, replicated values, so they agree already; this
// makes sure no rank stops while the others wait in a collective).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_TRAIN_HEALTH_H
#define METART_SRC_TRAIN_HEALTH_H

#include "metart/train.h"

#include <string>
#include <vector>

namespace metart::train {

class UpdateHealth {
public:
  /// Allocates the step's norms output for `count` gradients in `context`,
  /// followed by a slot for its 0-d loss (and the verdict's buffer when
  /// `agree`: with more than one rank).
  metart_status allocate(metart_context *context, int64_t count, bool agree,
                         std::string &error);
  /// The descriptor the step writes its norms to.
  metart_tensor *normsOutput() { return &normsTensor; }
  /// Where the step writes its loss (8 bytes, after the norms).
  void *lossSlot() { return static_cast<double *>(normsTensor.data) + count; }
  /// Reads the loss (of `lossType`) and the norms of the meta-iteration
  /// just run; `healthy` when the loss and every norm are finite on every
  /// rank; `overflow` when not, but every rank's loss is finite (only a
  /// gradient is not: with a scaled loss, the scale was too large).
  metart_status check(int32_t lossType, double &loss, bool &healthy,
                      bool &overflow, std::string &error);
  /// The outer gradient's global L2 norm (before clipping).
  double gradNorm() const;
  /// The first gradient whose norm is not finite, or -1.
  int64_t firstNonfiniteGradient() const;

private:
  metart_context *context = nullptr;
  /// The norms and the loss's slot, as read back.
  std::vector<double> norms;
  int64_t count = 0, normsShape = 0, one = 1;
  metart_tensor normsTensor{}, verdictTensor{};
};

} // namespace metart::train

#endif // METART_SRC_TRAIN_HEALTH_H
