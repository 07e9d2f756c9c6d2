//===- Measurements.h - what calibration measures ---------------*- C++ -*-===//
//
// Each measurement runs on every rank at once and returns the slowest
// rank's figure (a step of a distributed program waits for its slowest
// rank), through the session's agreed timing.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CALIBRATE_MEASUREMENTS_H
#define METAC_LIB_CALIBRATE_MEASUREMENTS_H

#include "Session.h"

#include "metac/Planner/ClusterDescription.h"

#include <string>
#include <vector>

namespace metac::calibrate {

/// The sizes and sample counts of one calibration.
struct Plan {
  /// m = n = k of the products.
  std::vector<int64_t> gemmSizes;
  /// Elements of each operand of the bandwidth measurement.
  int64_t streamElements;
  /// Payload bytes per rank of the collectives.
  std::vector<double> messageBytes;
  SamplePolicy compute, tiny, collective;
};

Plan planFor(bool quick, bool cuda);

/// Rates of metart_nn_matmul (f32 and f64) per size, ascending.
llvm::Expected<std::vector<planner::GemmRate>> measureGemm(Session &session,
                                                           const Plan &plan);

/// Bytes per second read and written by a large metart_nn_binary.
llvm::Expected<double> measureBandwidth(Session &session, const Plan &plan);

/// Seconds per metart_nn_binary call on 4 elements.
llvm::Expected<double> measureLaunchOverhead(Session &session,
                                             const Plan &plan);

/// One fitted collective and how well the fit matches the samples.
struct MeasuredFit {
  planner::CollectiveFit fit;
  /// The largest relative residual of the fit.
  double worst = 0;
  /// The samples: payload bytes per rank and seconds per call.
  std::vector<double> bytes, seconds;
};

/// α–β fits of every collective over every group size that divides the
/// world (all groups of a size at once), and of send/recv between pairs of
/// ranks. Leaves the world laid out as one axis.
llvm::Expected<std::vector<MeasuredFit>> measureCollectives(Session &session,
                                                            const Plan &plan);

} // namespace metac::calibrate

#endif // METAC_LIB_CALIBRATE_MEASUREMENTS_H
