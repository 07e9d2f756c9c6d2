//===- Matrix.h - benchmark matrices for `metac bench` ----------*- C++ -*-===//
//
// A benchmark matrix (YAML) declares studies: a spec, the settings and
// flags every run of it takes, and axes whose values are crossed into
// points (an algorithm, a model width, a task count, a device count...).
// Each point runs `repetitions` times with different seeds. The file format
// is docs/benchmarking.md's; errors name the line and column.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_BENCH_MATRIX_H
#define METAC_BENCH_MATRIX_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace metac::bench {

/// One value of an axis: what a run at this value adds to the command.
struct AxisValue {
  std::string label;
  std::vector<std::string> settings; // `--set` of the spec
  std::vector<std::string> flags;    // further `metac run` flags
  int64_t processes = 0;             // MPI processes; 0: the study's
  std::string mesh;                  // `--mesh`; empty: the study's
};

struct Axis {
  std::string name;
  std::vector<AxisValue> values;
};

struct Study {
  std::string name;
  std::string spec; // absolute, or relative to the working directory
  int64_t iterations = 0;
  int64_t repetitions = 0;
  std::vector<std::string> settings;
  std::vector<std::string> flags;
  int64_t processes = 1;
  std::string mesh;
  /// How a device-count axis scales: `strong` (same work on more devices)
  /// or `weak` (work grows with the devices).
  std::string scaling = "strong";
  int64_t timeoutSeconds = 0; // 0: the matrix's (default 900)
  /// FLOP/s the hardware of one run can reach (all its processes), for
  /// model FLOPs utilisation; 0: the matrix's, or none.
  double peakFlops = 0;
  std::vector<Axis> axes;
};

struct Matrix {
  std::string name;
  std::vector<Study> studies;
};

/// One run: a study's point (one value of each axis) and a repetition.
struct BenchPoint {
  const Study *study = nullptr;
  /// (axis, label) in the study's axis order.
  std::vector<std::pair<std::string, std::string>> labels;
  std::vector<std::string> settings, flags;
  int64_t processes = 1;
  std::string mesh;
  int64_t repetition = 0;
  /// `<axis>=<label>,...` (`base` without axes); unique within the study.
  std::string pointName;
  /// `<pointName>.r<repetition>`: the stem of the run's files.
  std::string runName;
  /// Positions in the matrix, so reports keep its order.
  int64_t studyIndex = 0, pointIndex = 0;
};

/// Reads and checks a matrix; spec paths become relative to the matrix
/// file's directory. Errors go to `diagnostics` with their location.
std::optional<Matrix> readMatrixFile(llvm::StringRef path,
                                     llvm::raw_ostream &diagnostics);

/// Every run of the matrix, study by study; within a study repetition by
/// repetition (rounds), each round the points in the order of the axes
/// (the last axis fastest).
std::vector<BenchPoint> expandMatrix(const Matrix &matrix);

} // namespace metac::bench

#endif // METAC_BENCH_MATRIX_H
