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

/// The task classes of a train declaration's `mix { ... }` record (`field`
/// is that record): an array of {name, tasks, support, query, steps}
/// dictionaries for `meta.task_mix`, or null after errors.
mlir::ArrayAttr readTaskMix(const Field &field, SourceDiagnostics &diags,
                            mlir::OpBuilder &builder, meta::TasksOp tasks,
                            mlir::Attribute algorithm, int64_t metaBatch);

} // namespace metac::frontend

#endif // METAC_LIB_FRONTEND_DECLGEN_H
