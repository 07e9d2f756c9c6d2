//===- RankHeader.h - the rank a printed program is for ---------*- C++ -*-===//

#ifndef METAC_LIB_DRIVER_RANKHEADER_H
#define METAC_LIB_DRIVER_RANKHEADER_H

#include "metac/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace metac::driver {

/// Checks `--rank` against the mesh and says which rank the printed program
/// is for. Task and data parallelism are SPMD: every rank runs the same
/// program on its own slice of the task batch.
mlir::LogicalResult printRankHeader(mlir::ModuleOp module, Phase phase,
                                    int64_t rank, llvm::raw_ostream &os);

} // namespace metac::driver

#endif // METAC_LIB_DRIVER_RANKHEADER_H
