//===- Remat.h - recomputation chosen from a memory budget ------*- C++ -*-===//
//
// `--memory-budget=BYTES`: the driver compiles the meta-phase module to the
// autodiff phase once per candidate recomputation (none, then more and more
// segments of the meta-gradient's forward recomputed in its reverse sweep)
// and keeps the one with the fewest recomputed segments whose peak fits:
// the largest function's scratch peak (the runtime's arena, replayed) plus
// its arguments, on one device before partitioning.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_DRIVER_REMAT_H
#define METAC_LIB_DRIVER_REMAT_H

#include "metac/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace metac::driver {

/// `--remat=steps`: every inner step a segment of its own (meta-autodiff
/// clamps it to the steps).
inline constexpr int64_t kRematEveryStep = int64_t(1) << 30;

/// A copy of `metaModule` compiled to the autodiff phase with `options`;
/// its diagnostics are collected in the error, not reported.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
compileToAutodiff(mlir::ModuleOp metaModule, const PipelineOptions &options);

/// What a recomputation policy leaves at its peak.
struct RematChoice {
  /// meta-autodiff's `remat` (0: none).
  int64_t segments = 0;
  uint64_t peakBytes = 0;
  /// Peak without recomputation.
  uint64_t keptPeakBytes = 0;
};

/// The peak bytes of `metaModule` compiled to the autodiff phase with
/// `options` (on a copy).
llvm::Expected<uint64_t> autodiffPeakBytes(mlir::ModuleOp metaModule,
                                           const PipelineOptions &options);

/// The recomputation with the fewest segments that fits `budgetBytes`, or
/// an error giving the smallest peak any reaches.
llvm::Expected<RematChoice> chooseRemat(mlir::ModuleOp metaModule,
                                        const PipelineOptions &options,
                                        uint64_t budgetBytes);

/// "no recomputation", "remat N" or "every inner step recomputed".
std::string describeRemat(int64_t segments);

/// `--remat`: off, sqrt, steps or a number of segments (>= 2).
llvm::Expected<int64_t> parseRemat(llvm::StringRef text);

/// `--memory-budget`: bytes, with an optional K, M or G (binary) suffix.
llvm::Expected<uint64_t> parseBytes(llvm::StringRef text);

} // namespace metac::driver

#endif // METAC_LIB_DRIVER_REMAT_H
