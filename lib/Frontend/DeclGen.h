//===- DeclGen.h - tasks and train declarations to meta ops ------*- C++
//-*-===//

#ifndef METAC_LIB_FRONTEND_DECLGEN_H
#define METAC_LIB_FRONTEND_DECLGEN_H

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Frontend/AST.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace metac::frontend {

/// Builds `meta.tasks` for a task distribution (null after errors).
meta::TasksOp generateTasks(const TasksDecl &decl, SourceDiagnostics &diags,
                            mlir::OpBuilder &builder,
                            llvm::StringRef specDirectory);

/// What a train declaration may refer to, by spec name.
struct DeclarationNames {
  llvm::StringMap<mlir::func::FuncOp> models;
  llvm::StringMap<meta::TasksOp> tasks;
  /// Declarations that had errors: references to them report nothing more.
  llvm::StringSet<> failed;
};

/// Builds `meta.train` for a training program (null after errors).
meta::TrainOp generateTrain(const TrainDecl &decl,
                            const DeclarationNames &names,
                            SourceDiagnostics &diags, mlir::OpBuilder &builder);

} // namespace metac::frontend

#endif // METAC_LIB_FRONTEND_DECLGEN_H
