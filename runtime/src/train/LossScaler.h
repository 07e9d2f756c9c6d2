//===- LossScaler.h - the scale of a dynamically scaled loss ----*- C++ -*-===//
//
// A step compiled with dynamic loss scaling multiplies its meta-loss by a
// scale before differentiation and divides the gradients by it after, so
// that the 16-bit model's cotangents stay clear of underflow. The driver
// keeps the scale as PyTorch's GradScaler does: 2^16 at first, halved when
// a meta-iteration's gradient overflows (that update is skipped), doubled
// after 2000 healthy meta-iterations in a row. Powers of two: scaling and
// unscaling are exact.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_TRAIN_LOSSSCALER_H
#define METART_SRC_TRAIN_LOSSSCALER_H

#include <cstdint>

namespace metart::train {

class LossScaler {
public:
  static constexpr double kInitial = 65536.0;
  static constexpr int64_t kGrowthInterval = 2000;

  double scale() const { return value; }
  int64_t healthyInRow() const { return healthy; }
  /// After a meta-iteration: whether the scale changed.
  bool update(bool overflowed) {
    if (overflowed) {
      value /= 2;
      healthy = 0;
      return true;
    }
    if (++healthy < kGrowthInterval)
      return false;
    healthy = 0;
    value *= 2;
    return true;
  }
  /// From a checkpoint.
  void restore(double scale, int64_t healthyInRow) {
    value = scale;
    healthy = healthyInRow;
  }

private:
  double value = kInitial;
  int64_t healthy = 0;
};

} // namespace metart::train

#endif // METART_SRC_TRAIN_LOSSSCALER_H
