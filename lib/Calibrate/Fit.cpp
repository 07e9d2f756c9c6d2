//===- Fit.cpp - the α–β model of a collective ----------------------------===//
//
// time = α + s · bytes (s = 1/β) by weighted least squares with weights
// 1/time²: the relative error of each size counts, so the latency-bound
// sizes decide α and the bandwidth-bound ones β, instead of the largest
// message deciding both.
//
//===----------------------------------------------------------------------===//

#include "metac/Calibrate/Calibrate.h"

#include <algorithm>
#include <cmath>

using metac::planner::CollectiveFit;

CollectiveFit metac::calibrate::fitAlphaBeta(llvm::ArrayRef<double> bytes,
                                             llvm::ArrayRef<double> seconds,
                                             double *worst) {
  double sw = 0, sb = 0, sbb = 0, st = 0, sbt = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    double w = 1 / (seconds[i] * seconds[i]);
    sw += w;
    sb += w * bytes[i];
    sbb += w * bytes[i] * bytes[i];
    st += w * seconds[i];
    sbt += w * bytes[i] * seconds[i];
  }
  double det = sw * sbb - sb * sb;
  double alpha = det > 0 ? (sbb * st - sb * sbt) / det : 0;
  double slope = det > 0 ? (sw * sbt - sb * st) / det : 0;
  if (alpha < 0) {
    // A latency below the clock's reach: refit through the origin.
    alpha = 0;
    slope = sbb > 0 ? sbt / sbb : 0;
  }
  // Times that do not grow with the size (all latency): keep β finite and
  // large enough that the largest message's transfer is 0.1% of its time.
  double largest = *std::max_element(bytes.begin(), bytes.end());
  double longest = *std::max_element(seconds.begin(), seconds.end());
  slope = std::max(slope, 1e-3 * longest / largest);
  CollectiveFit fit;
  fit.alpha = alpha;
  fit.beta = 1 / slope;
  if (worst) {
    *worst = 0;
    for (size_t i = 0; i < bytes.size(); ++i)
      *worst = std::max(
          *worst, std::abs(alpha + slope * bytes[i] - seconds[i]) / seconds[i]);
  }
  return fit;
}
