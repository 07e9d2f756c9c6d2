//===- Constants.cpp - replace constants' names by their values -----------===//

#include "metac/Frontend/Resolve.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace metac::frontend;

namespace {

class ConstantResolver {
public:
  ConstantResolver(Module &module, SourceDiagnostics &diags)
      : module(module), diags(diags) {}

  mlir::LogicalResult run() {
    llvm::StringMap<SourceLoc> declarations;
    for (const FunctionDecl &fn : module.functions)
      declarations.try_emplace(fn.name, fn.loc);
    for (const TasksDecl &tasks : module.tasks)
      declarations.try_emplace(tasks.name, tasks.loc);
    for (const TrainDecl &train : module.trains)
      declarations.try_emplace(train.name, train.loc);
    for (const ConstDecl &constant : module.constants) {
      if (!values.try_emplace(constant.name, constant.value.get()).second)
        diags.error(constant.loc)
            << "constant '" << constant.name << "' is declared twice";
      else if (declarations.count(constant.name))
        diags.error(constant.loc) << "constant '" << constant.name
                                  << "' has the name of another declaration";
    }
    if (values.empty() && !hasNamedRepeat())
      return mlir::success();
    for (FunctionDecl &fn : module.functions) {
      for (const Param &param : fn.params)
        if (values.count(param.name))
          diags.error(param.loc)
              << "parameter '" << param.name << "' has the name of a constant";
      resolve(fn.body);
    }
    for (TasksDecl &tasks : module.tasks)
      resolve(tasks.fields);
    for (TrainDecl &train : module.trains)
      resolve(train.fields);
    return mlir::failure(failed);
  }

private:
  bool hasNamedRepeat() const {
    bool found = false;
    std::function<void(const std::vector<StmtPtr> &)> visit =
        [&](const std::vector<StmtPtr> &body) {
          for (const StmtPtr &stmt : body)
            if (auto *repeat = llvm::dyn_cast<RepeatStmt>(stmt.get())) {
              found |= !repeat->countName.empty();
              visit(repeat->body);
            }
        };
    for (const FunctionDecl &fn : module.functions)
      visit(fn.body);
    return found;
  }

  void error(SourceLoc loc, const llvm::Twine &message) {
    diags.error(loc, message);
    failed = true;
  }

  void resolve(std::vector<StmtPtr> &body) {
    for (StmtPtr &stmt : body) {
      llvm::TypeSwitch<Stmt *>(stmt.get())
          .Case([&](AssignStmt *s) {
            if (values.count(s->name))
              error(s->getLoc(), "'" + s->name +
                                     "' is a constant and cannot be "
                                     "assigned; choose another name");
            resolve(s->value);
          })
          .Case([&](ReturnStmt *s) { resolve(s->value); })
          .Case([&](RepeatStmt *s) {
            if (!s->countName.empty()) {
              const ConfigValue *value = values.lookup(s->countName);
              if (!value)
                error(s->countLoc,
                      "repeat count '" + s->countName + "' is not a constant");
              else if (value->kind != ConfigValue::Kind::Integer)
                error(s->countLoc, "repeat count '" + s->countName +
                                       "' is not an integer constant");
              else
                s->count = value->intValue;
            }
            resolve(s->body);
          });
    }
  }

  void resolve(ExprPtr &expr) {
    if (auto *name = llvm::dyn_cast<NameExpr>(expr.get())) {
      if (const ConfigValue *value = values.lookup(name->name))
        expr = std::make_unique<NumberExpr>(name->getLoc(), value->asDouble(),
                                            value->kind ==
                                                ConfigValue::Kind::Integer);
      return;
    }
    llvm::TypeSwitch<Expr *>(expr.get())
        .Case([&](ListExpr *e) {
          for (ExprPtr &element : e->elements)
            resolve(element);
        })
        .Case([&](CallExpr *e) {
          for (ExprPtr &arg : e->args)
            resolve(arg);
          for (KeywordArg &keyword : e->keywords)
            resolve(keyword.value);
        })
        .Case([&](BinaryExpr *e) {
          resolve(e->lhs);
          resolve(e->rhs);
        })
        .Case([&](NegateExpr *e) { resolve(e->operand); });
  }

  void resolve(std::vector<Field> &fields) {
    for (Field &field : fields)
      if (field.value)
        resolve(*field.value);
  }

  void resolve(ConfigValue &value) {
    switch (value.kind) {
    case ConfigValue::Kind::Name:
      if (const ConfigValue *constant = values.lookup(value.text)) {
        value.kind = constant->kind;
        value.intValue = constant->intValue;
        value.floatValue = constant->floatValue;
        value.text.clear();
      }
      return;
    case ConfigValue::Kind::List:
      for (ConfigValuePtr &element : value.elements)
        resolve(*element);
      return;
    case ConfigValue::Kind::Record:
      resolve(value.fields);
      return;
    default:
      return;
    }
  }

  Module &module;
  SourceDiagnostics &diags;
  llvm::StringMap<const ConfigValue *> values;
  bool failed = false;
};

} // namespace

mlir::LogicalResult
metac::frontend::resolveConstants(Module &module, SourceDiagnostics &diags) {
  unsigned before = diags.getErrorCount();
  if (mlir::failed(ConstantResolver(module, diags).run()))
    return mlir::failure();
  return mlir::failure(diags.getErrorCount() != before);
}
