//===- MLIRGen.h - spec AST to meta and nn IR --------------------*- C++
//-*-===//

#ifndef METAC_FRONTEND_MLIRGEN_H
#define METAC_FRONTEND_MLIRGEN_H

#include "metac/Frontend/AST.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace metac::frontend {

/// Lowers a parsed spec to the `meta` phase: one `func.func` per model over
/// `nn` ops (parameters first, then the sample), one `meta.tasks` per task
/// distribution and one `meta.train` per training program. Relative paths in
/// the spec are resolved against `specDirectory`. Returns null after
/// reporting every error found through `diags`.
mlir::OwningOpRef<mlir::ModuleOp> generateMLIR(const Module &module,
                                               SourceDiagnostics &diags,
                                               llvm::StringRef specDirectory);

} // namespace metac::frontend

#endif // METAC_FRONTEND_MLIRGEN_H
