//===- ModelGen.h - model declarations to func over nn ops -------*- C++
//-*-===//

#ifndef METAC_LIB_FRONTEND_MODELGEN_H
#define METAC_LIB_FRONTEND_MODELGEN_H

#include "metac/Frontend/AST.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringMap.h"

namespace metac::frontend {

/// Builds the `func.func` of a model: statements become `nn` ops, layer calls
/// create parameters (leading function arguments named with `meta.param`),
/// blocks are inlined with prefixed parameter names, and `repeat` unrolls.
/// Returns null after reporting errors.
mlir::func::FuncOp
generateModel(const FunctionDecl &model,
              const llvm::StringMap<const FunctionDecl *> &blocks,
              SourceDiagnostics &diags, mlir::OpBuilder &builder);

/// The names callable in a model body (for "did you mean").
llvm::ArrayRef<llvm::StringRef> getBuiltinNames();

} // namespace metac::frontend

#endif // METAC_LIB_FRONTEND_MODELGEN_H
