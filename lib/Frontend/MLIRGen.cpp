//===- MLIRGen.cpp - spec AST to meta and nn IR ---------------------------===//

#include "metac/Frontend/MLIRGen.h"

#include "DeclGen.h"
#include "ModelGen.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNDialect.h"

#include "mlir/IR/Verifier.h"

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

mlir::OwningOpRef<ModuleOp>
metac::frontend::generateMLIR(const Module &module, SourceDiagnostics &diags,
                              llvm::StringRef specDirectory) {
  MLIRContext *ctx = diags.getContext();
  ctx->loadDialect<meta::MetaDialect, nn::NNDialect, func::FuncDialect>();
  OpBuilder builder(ctx);
  OwningOpRef<ModuleOp> result =
      ModuleOp::create(FileLineColLoc::get(ctx, diags.getFilename(), 1, 1));
  builder.setInsertionPointToEnd(result->getBody());
  unsigned errorsBefore = diags.getErrorCount();
  // The nn ops' verifiers report straight to the context, not through
  // `diags`: notice them too (and pass them on to the next handler).
  bool opErrors = false;
  ScopedDiagnosticHandler noticeOpErrors(ctx, [&](Diagnostic &diag) {
    opErrors |= diag.getSeverity() == DiagnosticSeverity::Error;
    return failure();
  });
  auto hadErrors = [&] {
    return opErrors || diags.getErrorCount() != errorsBefore;
  };

  // One namespace for every declaration, so references are unambiguous.
  llvm::StringMap<SourceLoc> declared;
  auto declare = [&](const std::string &name, SourceLoc loc) {
    auto [it, inserted] = declared.try_emplace(name, loc);
    if (inserted)
      return true;
    InFlightDiagnostic diag = diags.error(loc);
    diag << "redefinition of '" << name << "'";
    diag.attachNote(diags.getLocation(it->second))
        << "previous definition here";
    return false;
  };

  llvm::StringMap<const FunctionDecl *> blocks;
  for (const FunctionDecl &fn : module.functions) {
    if (!declare(fn.name, fn.loc) || !fn.isBlock)
      continue;
    // Calls resolve to built-in operations first: such a block is unusable.
    if (llvm::is_contained(getBuiltinNames(), fn.name))
      diags.error(fn.loc) << "block '" << fn.name
                          << "' has the name of a built-in operation";
    else
      blocks[fn.name] = &fn;
  }

  DeclarationNames names;
  for (const FunctionDecl &fn : module.functions) {
    if (fn.isBlock || names.models.count(fn.name) || blocks.count(fn.name))
      continue;
    if (func::FuncOp model = generateModel(fn, blocks, diags, builder))
      names.models[fn.name] = model;
    else
      names.failed.insert(fn.name);
  }
  for (const TasksDecl &decl : module.tasks) {
    if (!declare(decl.name, decl.loc))
      continue;
    if (meta::TasksOp tasks =
            generateTasks(decl, diags, builder, specDirectory))
      names.tasks[decl.name] = tasks;
    else
      names.failed.insert(decl.name);
  }
  for (const TrainDecl &decl : module.trains)
    if (declare(decl.name, decl.loc))
      generateTrain(decl, names, diags, builder);

  if (module.trains.empty() && !hadErrors())
    diags.error(SourceLoc{1, 1})
        << "the spec has no 'train' declaration: nothing to compile";
  if (hadErrors())
    return nullptr;
  // Cross-declaration checks (model against tasks, losses, evaluations) are
  // the meta ops' verifiers; they report at the spec locations.
  if (failed(verify(*result)))
    return nullptr;
  return result;
}
