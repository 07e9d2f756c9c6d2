//===- ModelGen.cpp - model declarations to func over nn ops --------------===//
//
// The model generator's statements and expressions: the function, its
// parameters as leading arguments, assignments, `repeat`, block calls
// (inlined) and arithmetic; calls of builtins go to ModelLayers.cpp and
// ModelTensorOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "ModelGen.h"
#include "ModelGenerator.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

constexpr llvm::StringLiteral kBuiltins[] = {
    "linear",      "conv2d",    "max_pool2d", "avg_pool2d", "batch_norm",
    "layer_norm",  "embedding", "relu",       "tanh",       "sigmoid",
    "gelu",        "exp",       "log",        "sqrt",       "softmax",
    "log_softmax", "flatten",   "reshape",    "transpose",  "matmul",
    "sum",         "mean",      "attention",  "positions",  "moe"};

llvm::ArrayRef<llvm::StringRef> metac::frontend::getBuiltinNames() {
  static const SmallVector<StringRef> names(std::begin(kBuiltins),
                                            std::end(kBuiltins));
  return names;
}

//===----------------------------------------------------------------------===//
// Functions and statements
//===----------------------------------------------------------------------===//

func::FuncOp ModelGenerator::generate(const FunctionDecl &model) {
  if (model.params.size() != 1) {
    diags.error(model.loc) << "model '" << model.name
                           << "' must take exactly one input (a sample), got "
                           << model.params.size();
    return nullptr;
  }
  RankedTensorType inputType = convertType(*model.params[0].type, diags);
  RankedTensorType resultType = convertType(*model.resultType, diags);
  if (!inputType || !resultType)
    return nullptr;
  if (!isa<FloatType>(resultType.getElementType())) {
    diags.error(model.resultType->loc)
        << "model '" << model.name << "' must return a float tensor, not "
        << formatType(resultType);
    return nullptr;
  }
  // Parameters take the element type of the model's output.
  paramElementType = resultType.getElementType();

  auto fn =
      func::FuncOp::create(builder, loc(model.loc), model.name,
                           builder.getFunctionType({inputType}, {resultType}));
  entry = fn.addEntryBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(entry);

  Scope scope;
  scope.vars[model.params[0].name] = entry->getArgument(0);
  bool ok = genBody(model.body, scope);
  if (ok && !scope.result) {
    diags.error(model.loc) << "model '" << model.name
                           << "' has no return statement";
    ok = false;
  }
  if (ok && *scope.result && scope.result->getType() != resultType) {
    diags.error(model.resultType->loc)
        << "model '" << model.name << "' returns "
        << formatType(scope.result->getType()) << " but is declared to return "
        << formatType(resultType);
    ok = false;
  }
  if (!ok || !*scope.result) {
    fn.erase();
    return nullptr;
  }
  // Layers' auxiliary losses (MoE load balancing), summed: a second result
  // that the task losses include.
  Value aux;
  for (Value term : auxLosses)
    aux =
        aux ? nn::AddOp::create(builder, loc(model.loc), aux, term).getResult()
            : term;
  SmallVector<Value> results{*scope.result};
  if (aux)
    results.push_back(aux);
  func::ReturnOp::create(builder, loc(model.loc), results);
  fn.setType(builder.getFunctionType(entry->getArgumentTypes(),
                                     ValueRange(results).getTypes()));
  if (results.size() > 1)
    fn.setResultAttr(1, "meta.aux_loss", builder.getUnitAttr());
  for (unsigned i = 0; i < numParams; ++i)
    fn.setArgAttrs(i, paramAttrs[i].getDictionary(builder.getContext()));
  return fn;
}

bool ModelGenerator::genBody(const std::vector<StmtPtr> &body, Scope &scope) {
  bool ok = true;
  for (const StmtPtr &stmt : body) {
    if (scope.result) {
      diags.error(stmt->getLoc()) << "statement after return";
      return false;
    }
    ok &= genStatement(*stmt, scope);
    if (opCount > kMaxOps) {
      // Reported once, at the outermost statement of the body that crossed
      // the limit (enclosing bodies and blocks just fail).
      if (!reportedOpLimit)
        diags.error(stmt->getLoc())
            << "model unrolls to more than " << kMaxOps << " operations";
      reportedOpLimit = true;
      return false;
    }
  }
  return ok;
}

bool ModelGenerator::genStatement(const Stmt &stmt, Scope &scope) {
  if (auto *assign = dyn_cast<AssignStmt>(&stmt)) {
    Value v = genTensor(*assign->value, scope, "an assignment");
    scope.vars[assign->name] = v;
    return bool(v);
  }
  if (auto *ret = dyn_cast<ReturnStmt>(&stmt)) {
    Value v = genTensor(*ret->value, scope, "a return");
    scope.result = v;
    return bool(v);
  }
  auto *repeat = cast<RepeatStmt>(&stmt);
  if (repeat->count < 1 || repeat->count > 10000) {
    diags.error(repeat->getLoc())
        << "repeat count must be in [1, 10000], got " << repeat->count;
    return false;
  }
  // Every iteration names its layers as the first did, plus ".<i>".
  llvm::StringMap<unsigned> countersBefore = scope.counters;
  std::string outerSuffix = scope.repeatSuffix;
  bool ok = true;
  for (int64_t i = 0; i < repeat->count && ok; ++i) {
    scope.counters = countersBefore;
    scope.repeatSuffix = outerSuffix + "." + std::to_string(i);
    for (const StmtPtr &inner : repeat->body) {
      if (isa<ReturnStmt>(inner.get())) {
        diags.error(inner->getLoc()) << "return inside repeat";
        ok = false;
        break;
      }
      ok &= genStatement(*inner, scope);
      // Nested repeats multiply: stop as soon as the model is too large (the
      // enclosing body reports it).
      if (opCount > kMaxOps)
        return false;
    }
  }
  scope.repeatSuffix = outerSuffix;
  return ok;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Value ModelGenerator::genTensor(const Expr &expr, Scope &scope,
                                StringRef what) {
  Operand operand = genExpr(expr, scope);
  if (operand.number) {
    diags.error(expr.getLoc()) << what << " needs a tensor, not a number";
    return nullptr;
  }
  return operand.tensor;
}

Operand ModelGenerator::genExpr(const Expr &expr, Scope &scope) {
  ++opCount;
  return llvm::TypeSwitch<const Expr *, Operand>(&expr)
      .Case([&](const NumberExpr *e) {
        return Operand{nullptr, e->value, e->isInteger};
      })
      .Case([&](const NameExpr *e) -> Operand {
        auto it = scope.vars.find(e->name);
        if (it == scope.vars.end()) {
          SmallVector<StringRef> names;
          for (auto &entry : scope.vars)
            names.push_back(entry.getKey());
          InFlightDiagnostic diag = diags.error(e->getLoc());
          diag << "use of undefined name '" << e->name << "'";
          attachDidYouMean(diag, e->name, names);
          return {};
        }
        return Operand{it->second, std::nullopt};
      })
      .Case([&](const StringExpr *e) -> Operand {
        diags.error(e->getLoc()) << "a string is not a value here";
        return {};
      })
      .Case([&](const ListExpr *e) -> Operand {
        diags.error(e->getLoc()) << "a list is only allowed as an argument";
        return {};
      })
      .Case([&](const NegateExpr *e) -> Operand {
        Value v = genTensor(*e->operand, scope, "'-'");
        if (!v)
          return {};
        if (!isFloatTensor(v)) {
          diags.error(e->getLoc())
              << "'-' needs a float tensor, got " << formatType(v.getType());
          return {};
        }
        return Operand{finish(nn::NegOp::create(builder, loc(e->getLoc()), v))};
      })
      .Case([&](const BinaryExpr *e) { return genBinary(*e, scope); })
      .Case([&](const CallExpr *e) { return Operand{genCall(*e, scope)}; });
}

Operand ModelGenerator::genBinary(const BinaryExpr &expr, Scope &scope) {
  Operand lhs = genExpr(*expr.lhs, scope);
  Operand rhs = genExpr(*expr.rhs, scope);
  if (!lhs || !rhs)
    return {};
  if (lhs.number && rhs.number) {
    double a = *lhs.number, b = *rhs.number;
    switch (expr.op) {
    case '+':
      return Operand{nullptr, a + b};
    case '-':
      return Operand{nullptr, a - b};
    case '*':
      return Operand{nullptr, a * b};
    default:
      if (b == 0) {
        diags.error(expr.getLoc()) << "division by zero";
        return {};
      }
      return Operand{nullptr, a / b};
    }
  }
  Location l = loc(expr.getLoc());
  if (lhs.number || rhs.number) {
    // Numbers scale tensors: `0.5 * x`, `x * 2`, `x / 4`.
    double factor = lhs.number ? *lhs.number : *rhs.number;
    Value tensor = lhs.number ? rhs.tensor : lhs.tensor;
    if (expr.op == '/' && rhs.number) {
      if (factor == 0) {
        diags.error(expr.getLoc()) << "division by zero";
        return {};
      }
      factor = 1 / factor;
    } else if (expr.op != '*') {
      diags.error(expr.getLoc())
          << "'" << expr.op << "' between a number and a tensor is not "
          << "supported; numbers can only scale tensors ('*' and '/')";
      return {};
    }
    if (!isFloatTensor(tensor)) {
      diags.error(expr.getLoc())
          << "'" << expr.op << "' needs float tensors, got "
          << formatType(tensor.getType());
      return {};
    }
    return Operand{finish(nn::ScaleOp::create(
        builder, l, tensor, builder.getF64FloatAttr(factor)))};
  }
  if (lhs.tensor.getType() != rhs.tensor.getType()) {
    diags.error(expr.getLoc())
        << "'" << expr.op << "' needs operands of the same type, got "
        << formatType(lhs.tensor.getType()) << " and "
        << formatType(rhs.tensor.getType());
    return {};
  }
  if (!isFloatTensor(lhs.tensor)) {
    diags.error(expr.getLoc())
        << "'" << expr.op << "' needs float tensors, got "
        << formatType(lhs.tensor.getType());
    return {};
  }
  Operation *op = nullptr;
  switch (expr.op) {
  case '+':
    op = nn::AddOp::create(builder, l, lhs.tensor, rhs.tensor);
    break;
  case '-':
    op = nn::SubOp::create(builder, l, lhs.tensor, rhs.tensor);
    break;
  case '*':
    op = nn::MulOp::create(builder, l, lhs.tensor, rhs.tensor);
    break;
  default:
    op = nn::DivOp::create(builder, l, lhs.tensor, rhs.tensor);
    break;
  }
  return Operand{finish(op)};
}

Value ModelGenerator::genCall(const CallExpr &call, Scope &scope) {
  if (llvm::is_contained(getBuiltinNames(), call.callee))
    return genBuiltin(call, scope);
  auto it = blocks.find(call.callee);
  if (it != blocks.end())
    return genBlockCall(call, *it->second, scope);
  SmallVector<StringRef> names(getBuiltinNames());
  for (auto &entry : blocks)
    names.push_back(entry.getKey());
  InFlightDiagnostic diag = diags.error(call.getLoc());
  diag << "unknown operation '" << call.callee << "'";
  attachDidYouMean(diag, call.callee, names);
  return nullptr;
}

Value ModelGenerator::genBlockCall(const CallExpr &call,
                                   const FunctionDecl &block, Scope &scope) {
  if (llvm::is_contained(activeBlocks, &block)) {
    diags.error(call.getLoc())
        << "block '" << block.name << "' calls itself (blocks cannot recurse)";
    return nullptr;
  }
  if (activeBlocks.size() >= kMaxBlockDepth) {
    diags.error(call.getLoc())
        << "blocks nest more than " << kMaxBlockDepth << " deep";
    return nullptr;
  }
  if (!checkArguments(call, block.params.size(), block.params.size(), {"name"}))
    return nullptr;
  std::optional<std::string> name = layerName(call, scope);
  if (!name)
    return nullptr;
  Scope inner;
  inner.prefix = *name + ".";
  for (auto [param, arg] : llvm::zip(block.params, call.args)) {
    Value v = genTensor(*arg, scope, "a block argument");
    if (!v)
      return nullptr;
    if (param.type) {
      RankedTensorType expected = convertType(*param.type, diags);
      if (!expected)
        return nullptr;
      if (expected != v.getType()) {
        diags.error(arg->getLoc())
            << "block '" << block.name << "' expects " << formatType(expected)
            << " for '" << param.name << "', got " << formatType(v.getType());
        return nullptr;
      }
    }
    inner.vars[param.name] = v;
  }
  activeBlocks.push_back(&block);
  bool ok = genBody(block.body, inner);
  activeBlocks.pop_back();
  if (!ok)
    return nullptr;
  if (!inner.result) {
    diags.error(block.loc) << "block '" << block.name
                           << "' has no return statement";
    return nullptr;
  }
  Value result = *inner.result;
  if (result && block.resultType) {
    RankedTensorType expected = convertType(*block.resultType, diags);
    if (!expected)
      return nullptr;
    if (expected != result.getType()) {
      diags.error(block.resultType->loc)
          << "block '" << block.name << "' returns "
          << formatType(result.getType()) << " but is declared to return "
          << formatType(expected);
      return nullptr;
    }
  }
  return result;
}

func::FuncOp metac::frontend::generateModel(
    const FunctionDecl &model,
    const llvm::StringMap<const FunctionDecl *> &blocks,
    SourceDiagnostics &diags, OpBuilder &builder) {
  return ModelGenerator(blocks, diags, builder).generate(model);
}
