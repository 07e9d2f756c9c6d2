//===- CostModel.h - predicted time and memory of a meta-iteration -*- C++
//-*-===//
//
// The cost model of ARCHITECTURE §5, evaluated on the partitioned program
// of one training (what each rank runs, collectives and stage transfers
// included):
//  - compute: every runtime call costs the device's launch overhead plus
//    its roofline time, max(FLOPs / rate, bytes / memory bandwidth); the
//    rate of matrix products follows the calibrated GEMM table when the
//    description has one, else the peak for the element type;
//  - communication: each collective's α–β time over the links its group
//    crosses (CollectiveCost.h);
//  - pipelines: the stages' programs are simulated together, sends and
//    receives in order, collectives as meeting points, so the bubble is
//    the schedule's own (GPipe or 1F1B, any micro-batch count);
//  - memory: the runtime's arena replayed on each rank's program (scratch
//    blocks of 64-byte multiples, freed after their last reader and reused
//    by a later block of the same size), on top of the persistent buffers
//    (parameters, optimizer state, the task batch).
// Costs of identical ops (unrolled inner steps, repeated layers, the same
// shapes) are computed once.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_PLANNER_COSTMODEL_H
#define METAC_PLANNER_COSTMODEL_H

#include "metac/Planner/ClusterDescription.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace mlir {
class FlatSymbolRefAttr;
class SymbolTable;
} // namespace mlir
namespace mlir::func {
class FuncOp;
} // namespace mlir::func
namespace metac::meta {
class TrainOp;
} // namespace metac::meta

namespace metac::planner {

/// The replayed arena of one program: the most scratch bytes held at once.
struct ScratchUse {
  uint64_t peakBytes = 0;
  /// Blocks allocated, and how many of them reused a freed block.
  int64_t blocks = 0, reused = 0;
};

/// Replays the runtime's scratch allocation over `function` (straight-line
/// code, as lowered by convert-nn-to-runtime).
ScratchUse replayScratch(mlir::func::FuncOp function);

/// What one meta-iteration costs on the slowest rank.
struct IterationEstimate {
  /// Kernels and runtime-call overhead.
  double computeSeconds = 0;
  /// Collectives and stage transfers (the part not hidden by waiting).
  double commSeconds = 0;
  /// Waiting for other pipeline stages.
  double bubbleSeconds = 0;
  /// The trainer's own work: drawing the task batch, the health verdict.
  double driverSeconds = 0;
  double seconds() const {
    return computeSeconds + commSeconds + bubbleSeconds + driverSeconds;
  }
  /// Floating-point operations of one rank's program, and of all ranks.
  double rankFlops = 0, totalFlops = 0;
  /// Per device, the largest over ranks: persistent buffers and scratch.
  uint64_t persistentBytes = 0, scratchBytes = 0;
  uint64_t peakBytes() const { return persistentBytes + scratchBytes; }
  /// Bytes each rank hands to collectives per meta-iteration, by the mesh
  /// axes they span ("task", "task+pipeline", ...), and their time.
  std::map<std::string, double> bytesPerAxes, secondsPerAxes;
  /// Runtime calls per meta-iteration on the slowest rank, and the part of
  /// computeSeconds that is their launch overhead (the rest is roofline).
  int64_t calls = 0;
  double launchSeconds = 0;
  /// Collective calls per rank and meta-iteration, by mesh axes.
  std::map<std::string, double> callsPerAxes;
  /// The slowest rank's compute by op name: calls and seconds (what
  /// `metac run --profile` measures per runtime function).
  std::map<std::string, std::pair<int64_t, double>> perOp;
};

/// Estimates one meta-iteration of `train` (in a module at the planned
/// phase or later) on `cluster`: the step function, or its pipeline
/// stages, on the mesh of the train's plan.
llvm::Expected<IterationEstimate>
estimateIteration(mlir::ModuleOp module, llvm::StringRef train,
                  const ClusterDescription &cluster);

/// Estimates one meta-iteration of `train` whose task ranks all run `step`
/// (or its pipeline stages), on the mesh of its plan. estimateIteration
/// takes the slowest of a mixed meta-batch's step variants.
llvm::Expected<IterationEstimate>
estimateStep(mlir::SymbolTable &symbols, meta::TrainOp train,
             mlir::FlatSymbolRefAttr step, const ClusterDescription &cluster);

} // namespace metac::planner

#endif // METAC_PLANNER_COSTMODEL_H
