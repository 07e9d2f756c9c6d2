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

  // One namespace for every declaration, so references are unambiguous.
  llvm::StringMap<SourceLoc> declared;
  auto declare = [&](const std::string &name, SourceLoc loc) {
    auto [it, inserted] = declared.try_emplace(name, loc);
    if (inserted)
      return true;
    InFlightDiagnostic diag = diags.error(loc);
    diag << "redefinition of '" << name << "'";
    diag.attachNote(diags.getLocation(it->second)) << "previous definition here";
    return false;
  };

  llvm::StringMap<const FunctionDecl *> blocks;
  for (const FunctionDecl &fn : module.functions)
    if (declare(fn.name, fn.loc) && fn.isBlock)
      blocks[fn.name] = &fn;

  DeclarationNames names;
  for (const FunctionDecl &fn : module.functions) {
    if (fn.isBlock || names.models.count(fn.name) ||
        blocks.count(fn.name))
      continue;
    if (func::FuncOp model = generateModel(fn, blocks, diags, builder))
      names.models[fn.name] = model;
  }
  for (const TasksDecl &decl : module.tasks) {
    if (!declare(decl.name, decl.loc))
      continue;
    if (meta::TasksOp tasks = generateTasks(decl, diags, builder, specDirectory))
      names.tasks[decl.name] = tasks;
  }
  for (const TrainDecl &decl : module.trains)
    if (declare(decl.name, decl.loc))
      generateTrain(decl, names, diags, builder);

  if (module.trains.empty() && diags.getErrorCount() == errorsBefore)
    diags.error(SourceLoc{1, 1})
        << "the spec has no 'train' declaration: nothing to compile";
  if (diags.getErrorCount() != errorsBefore)
    return nullptr;
  // Cross-declaration checks (model against tasks, losses, evaluations) are
  // the meta ops' verifiers; they report at the spec locations.
  if (failed(verify(*result)))
    return nullptr;
  return result;
}
