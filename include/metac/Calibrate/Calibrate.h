//===- Calibrate.h - measuring the machine metac runs on --------*- C++ -*-===//
//
// `metac calibrate` (docs/planning.md): every rank of the job measures,
// through the runtime's own C API and all at once, what the cost model
// needs of a device (matrix-product rates by size at the shapes metac's
// programs have, α and β of each kind of kernel, the cost of waking the
// runtime's loop threads, memory bandwidth, the floor of a runtime call)
// and of the links between them (each collective's bus bandwidth per size
// and its α–β fit, per group size), so the figures are those compiled code
// gets, ranks sharing cores included. The result is a cluster description
// of one node with a device per rank.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_CALIBRATE_CALIBRATE_H
#define METAC_CALIBRATE_CALIBRATE_H

#include "metac/Planner/ClusterDescription.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace metac::calibrate {

struct CalibrationOptions {
  /// The runtime's CUDA backend (one GPU per rank, by local rank) rather
  /// than its CPU backend.
  bool cuda = false;
  /// Fewer and smaller sizes and fewer samples: seconds, not minutes.
  bool quick = false;
  /// The description's name (default: calibrated-<backend>-<ranks>).
  std::string name;
  /// Where rank 0 says what it measures (null: nowhere).
  llvm::raw_ostream *progress = nullptr;
};

struct Calibration {
  /// The measured node: a device per rank.
  planner::ClusterDescription cluster;
  /// When and how each figure was measured, one line each (the comments
  /// of the written file).
  std::vector<std::string> notes;
};

/// Measures this machine. Collective: every rank of the job calls it and
/// gets the same result. Joins the runtime's world first.
llvm::Expected<Calibration> calibrate(const CalibrationOptions &options);

/// Fits `seconds = alpha + bytes / beta` to the samples by least squares on
/// relative residuals (every size weighs alike, from 8 bytes to MiB), with
/// alpha >= 0 and beta > 0. `worst` receives the largest relative residual.
planner::CollectiveFit fitAlphaBeta(llvm::ArrayRef<double> bytes,
                                    llvm::ArrayRef<double> seconds,
                                    double *worst = nullptr);

} // namespace metac::calibrate

#endif // METAC_CALIBRATE_CALIBRATE_H
