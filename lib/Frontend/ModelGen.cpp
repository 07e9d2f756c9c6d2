//===- ModelGen.cpp - model declarations to func over nn ops --------------===//

#include "ModelGen.h"
#include "GenUtils.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

namespace {

bool isFloatTensor(Value v) {
  return isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType());
}

/// A generated value: a tensor, or a plain number (`0.5 * x`).
struct Operand {
  Value tensor;
  std::optional<double> number;
  bool isInteger = false;
  explicit operator bool() const { return tensor || number; }
};

/// Names visible in a model or block body and how its layers are named.
struct Scope {
  /// Null values mark names whose definition failed (no cascading errors).
  llvm::StringMap<Value> vars;
  /// Prefix of every parameter created here ("" or "enc." in a block).
  std::string prefix;
  /// Suffix of repeat iterations (".0", ".2.1").
  std::string repeatSuffix;
  /// Per-op counters for automatic layer names (`linear0`, `conv2d1`).
  llvm::StringMap<unsigned> counters;
  std::optional<Value> result;
};

constexpr llvm::StringLiteral kBuiltins[] = {
    "linear",      "conv2d",    "max_pool2d", "avg_pool2d", "batch_norm",
    "layer_norm",  "embedding", "relu",       "tanh",       "sigmoid",
    "gelu",        "exp",       "log",        "sqrt",       "softmax",
    "log_softmax", "flatten",   "reshape",    "transpose",  "matmul",
    "sum",         "mean",      "attention"};

/// Bounds the inlining of nested blocks (and catches recursion early).
constexpr unsigned kMaxBlockDepth = 32;
/// Bounds the unrolled size of a model.
constexpr int64_t kMaxOps = 1 << 20;

class ModelGenerator {
public:
  ModelGenerator(const llvm::StringMap<const FunctionDecl *> &blocks,
                 SourceDiagnostics &diags, OpBuilder &builder)
      : blocks(blocks), diags(diags), builder(builder) {}

  func::FuncOp generate(const FunctionDecl &model);

private:
  Location loc(SourceLoc l) { return diags.getLocation(l); }

  // Statements.
  bool genBody(const std::vector<StmtPtr> &body, Scope &scope);
  bool genStatement(const Stmt &stmt, Scope &scope);

  // Expressions.
  Operand genExpr(const Expr &expr, Scope &scope);
  Value genTensor(const Expr &expr, Scope &scope, StringRef what);
  Operand genBinary(const BinaryExpr &expr, Scope &scope);
  Value genCall(const CallExpr &call, Scope &scope);
  Value genBuiltin(const CallExpr &call, Scope &scope);
  Value genBlockCall(const CallExpr &call, const FunctionDecl &block,
                     Scope &scope);

  // Arguments of calls.
  bool checkArguments(const CallExpr &call, size_t minPositional,
                      size_t maxPositional, ArrayRef<StringRef> keywords);
  const Expr *keyword(const CallExpr &call, StringRef name);
  std::optional<int64_t> intValue(const Expr &expr, StringRef what,
                                  int64_t min);
  std::optional<double> numberValue(const Expr &expr, StringRef what);
  std::optional<SmallVector<int64_t>> intPair(const Expr *expr, StringRef what,
                                              int64_t def, int64_t min);
  std::optional<SmallVector<int64_t>> intList(const Expr &expr, StringRef what);
  std::optional<bool> boolValue(const Expr *expr, StringRef what, bool def);

  // Parameters.
  std::optional<std::string> layerName(const CallExpr &call, Scope &scope);
  Value createParam(StringRef layer, StringRef suffix, ArrayRef<int64_t> shape,
                    Type element, StringRef init, int64_t fanIn,
                    SourceLoc where);

  /// Verifies a freshly built op (reporting at its location) and returns its
  /// result, or null.
  Value finish(Operation *op);
  Value genAttention(const CallExpr &call, Scope &scope);
  bool requireFloat(Value v, const CallExpr &call);
  bool requireRank(Value v, const CallExpr &call, int64_t minRank,
                   StringRef layout);

  const llvm::StringMap<const FunctionDecl *> &blocks;
  SourceDiagnostics &diags;
  OpBuilder &builder;
  Block *entry = nullptr;
  unsigned numParams = 0;
  SmallVector<NamedAttrList> paramAttrs;
  llvm::StringMap<SourceLoc> paramLocs;
  Type paramElementType;
  SmallVector<const FunctionDecl *> activeBlocks;
  int64_t opCount = 0;
  bool reportedOpLimit = false;
};

} // namespace

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
  func::ReturnOp::create(builder, loc(model.loc), *scope.result);
  fn.setType(builder.getFunctionType(entry->getArgumentTypes(), {resultType}));
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

//===----------------------------------------------------------------------===//
// Call arguments
//===----------------------------------------------------------------------===//

bool ModelGenerator::checkArguments(const CallExpr &call, size_t minPositional,
                                    size_t maxPositional,
                                    ArrayRef<StringRef> keywords) {
  if (call.args.size() < minPositional || call.args.size() > maxPositional) {
    InFlightDiagnostic diag = diags.error(call.getLoc());
    diag << "'" << call.callee << "' expects ";
    if (minPositional == maxPositional)
      diag << minPositional;
    else
      diag << minPositional << " to " << maxPositional;
    diag << " positional argument" << (maxPositional == 1 ? "" : "s")
         << ", got " << call.args.size();
    return false;
  }
  llvm::StringSet<> seen;
  for (const KeywordArg &kw : call.keywords) {
    if (!llvm::is_contained(keywords, kw.name)) {
      InFlightDiagnostic diag = diags.error(kw.loc);
      diag << "unknown argument '" << kw.name << "' to '" << call.callee << "'";
      attachDidYouMean(diag, kw.name, keywords);
      return false;
    }
    if (!seen.insert(kw.name).second) {
      diags.error(kw.loc) << "argument '" << kw.name << "' given twice";
      return false;
    }
  }
  return true;
}

const Expr *ModelGenerator::keyword(const CallExpr &call, StringRef name) {
  for (const KeywordArg &kw : call.keywords)
    if (kw.name == name)
      return kw.value.get();
  return nullptr;
}

std::optional<int64_t> ModelGenerator::intValue(const Expr &expr,
                                                StringRef what, int64_t min) {
  auto *num = dyn_cast<NumberExpr>(&expr);
  if (!num || !num->isInteger) {
    diags.error(expr.getLoc()) << what << " must be an integer";
    return std::nullopt;
  }
  // Integer literals reach 2^63 - 1, which the double rounds up to 2^63:
  // clamp before converting, as out-of-range conversions are undefined.
  constexpr double kLimit = 0x1p63;
  int64_t value = num->value >= kLimit    ? INT64_MAX
                  : num->value <= -kLimit ? -INT64_MAX
                                          : static_cast<int64_t>(num->value);
  if (value < min) {
    diags.error(expr.getLoc())
        << what << " must be >= " << min << ", got " << value;
    return std::nullopt;
  }
  if (value > (int64_t(1) << 31)) {
    diags.error(expr.getLoc()) << what << " is too large: " << value;
    return std::nullopt;
  }
  return value;
}

std::optional<double> ModelGenerator::numberValue(const Expr &expr,
                                                  StringRef what) {
  auto *num = dyn_cast<NumberExpr>(&expr);
  if (!num) {
    diags.error(expr.getLoc()) << what << " must be a number";
    return std::nullopt;
  }
  return num->value;
}

std::optional<SmallVector<int64_t>> ModelGenerator::intPair(const Expr *expr,
                                                            StringRef what,
                                                            int64_t def,
                                                            int64_t min) {
  if (!expr)
    return SmallVector<int64_t>{def, def};
  if (auto *list = dyn_cast<ListExpr>(expr)) {
    if (list->elements.size() != 2) {
      diags.error(expr->getLoc()) << what << " must be an integer or a list "
                                  << "of two integers";
      return std::nullopt;
    }
    auto a = intValue(*list->elements[0], what, min);
    auto b = intValue(*list->elements[1], what, min);
    if (!a || !b)
      return std::nullopt;
    return SmallVector<int64_t>{*a, *b};
  }
  auto v = intValue(*expr, what, min);
  if (!v)
    return std::nullopt;
  return SmallVector<int64_t>{*v, *v};
}

std::optional<SmallVector<int64_t>> ModelGenerator::intList(const Expr &expr,
                                                            StringRef what) {
  auto *list = dyn_cast<ListExpr>(&expr);
  if (!list) {
    diags.error(expr.getLoc()) << what << " must be a list of integers";
    return std::nullopt;
  }
  SmallVector<int64_t> values;
  for (const ExprPtr &element : list->elements) {
    auto v = intValue(*element, what, -(int64_t(1) << 31));
    if (!v)
      return std::nullopt;
    values.push_back(*v);
  }
  return values;
}

std::optional<bool> ModelGenerator::boolValue(const Expr *expr, StringRef what,
                                              bool def) {
  if (!expr)
    return def;
  if (auto *name = dyn_cast<NameExpr>(expr)) {
    if (name->name == "true")
      return true;
    if (name->name == "false")
      return false;
  }
  diags.error(expr->getLoc()) << what << " must be true or false";
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

std::optional<std::string> ModelGenerator::layerName(const CallExpr &call,
                                                     Scope &scope) {
  std::string base;
  if (const Expr *named = keyword(call, "name")) {
    auto *str = dyn_cast<StringExpr>(named);
    if (!str || str->value.empty() || llvm::any_of(str->value, [](char c) {
          return !(llvm::isAlnum(c) || c == '_' || c == '.');
        })) {
      diags.error(named->getLoc())
          << "a layer name must be a non-empty string of letters, digits, "
             "'_' and '.'";
      return std::nullopt;
    }
    base = str->value;
  } else {
    base = call.callee + std::to_string(scope.counters[call.callee]++);
  }
  return scope.prefix + base + scope.repeatSuffix;
}

Value ModelGenerator::createParam(StringRef layer, StringRef suffix,
                                  ArrayRef<int64_t> shape, Type element,
                                  StringRef init, int64_t fanIn,
                                  SourceLoc where) {
  std::string name = (layer + "." + suffix).str();
  auto [it, inserted] = paramLocs.try_emplace(name, where);
  if (!inserted) {
    InFlightDiagnostic diag = diags.error(where);
    diag << "parameter '" << name << "' is defined twice";
    diag.attachNote(diags.getLocation(it->second)) << "first defined here";
    return nullptr;
  }
  Value param = entry->insertArgument(
      numParams, RankedTensorType::get(shape, element), loc(where));
  ++numParams;
  NamedAttrList attrs;
  attrs.set("meta.param", builder.getStringAttr(name));
  attrs.set("meta.init", builder.getStringAttr(init));
  if (fanIn > 0)
    attrs.set("meta.fan_in", builder.getI64IntegerAttr(fanIn));
  paramAttrs.push_back(attrs);
  return param;
}

/// Multi-head self-attention over the sequence of `x` ([S, D] per sample):
/// projections q, k, v of D features split into `heads` heads, softmax of
/// q k^T / sqrt(D / heads) (positions after the query masked out when
/// `causal`), the heads' weighted values joined and projected by o. Built
/// from nn ops, so it is differentiated (twice) like the rest. Parameters
/// `<name>.{q,k,v,o}.{weight,bias}` as four linear layers.
Value ModelGenerator::genAttention(const CallExpr &call, Scope &scope) {
  Location l = loc(call.getLoc());
  if (!checkArguments(call, 2, 2, {"name", "causal", "bias"}))
    return nullptr;
  Value x = genTensor(*call.args[0], scope, "an argument");
  if (!x || !requireFloat(x, call) ||
      !requireRank(x, call, 2, "[sequence, features]"))
    return nullptr;
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  auto heads = intValue(*call.args[1], "the number of heads", 1);
  auto causal = boolValue(keyword(call, "causal"), "'causal'", false);
  auto bias = boolValue(keyword(call, "bias"), "'bias'", true);
  auto name = layerName(call, scope);
  if (!heads || !causal || !bias || !name)
    return nullptr;
  ArrayRef<int64_t> xs = xt.getShape();
  int64_t rank = xs.size(), length = xs[rank - 2], features = xs[rank - 1];
  if (features % *heads != 0) {
    diags.error(call.getLoc()) << "'attention' cannot split " << features
                               << " features into " << *heads << " heads";
    return nullptr;
  }
  int64_t width = features / *heads;
  SmallVector<int64_t> lead(xs.drop_back(2));
  auto typeOf = [&](ArrayRef<int64_t> tail) {
    SmallVector<int64_t> shape(lead);
    shape.append(tail.begin(), tail.end());
    return RankedTensorType::get(shape, element);
  };
  auto project = [&](StringRef which, Value input) -> Value {
    Value w =
        createParam(*name, (which + ".weight").str(), {features, features},
                    element, "uniform_fan_in", features, call.getLoc());
    if (!w)
      return nullptr;
    Value b =
        *bias ? createParam(*name, (which + ".bias").str(), {features}, element,
                            "uniform_fan_in", features, call.getLoc())
              : Value();
    if (*bias && !b)
      return nullptr;
    return finish(nn::LinearOp::create(
        builder, l, cast<RankedTensorType>(input.getType()), input, w, b));
  };
  // [..., S, D] -> [..., heads, S, width]
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 2; ++d)
    perm.push_back(d);
  int64_t s = rank - 2;
  SmallVector<int64_t> toHeads(perm);
  toHeads.append({s + 1, s, s + 2});
  auto split = [&](Value v) -> Value {
    if (!v)
      return nullptr;
    Value r = finish(
        nn::ReshapeOp::create(builder, l, typeOf({length, *heads, width}), v));
    return r ? finish(nn::TransposeOp::create(
                   builder, l, typeOf({*heads, length, width}), r,
                   builder.getDenseI64ArrayAttr(toHeads)))
             : nullptr;
  };
  Value q = split(project("q", x));
  Value k = q ? split(project("k", x)) : nullptr;
  Value v = k ? split(project("v", x)) : nullptr;
  if (!v)
    return nullptr;
  Value scores = finish(nn::MatmulOp::create(
      builder, l, typeOf({*heads, length, length}), q, k, false, true));
  if (!scores)
    return nullptr;
  scores = finish(nn::ScaleOp::create(
      builder, l, scores,
      builder.getF64FloatAttr(1.0 / std::sqrt(static_cast<double>(width)))));
  if (scores && *causal) {
    // Later positions get a large negative score: softmax gives them 0.
    SmallVector<Attribute> mask;
    for (int64_t i = 0; i < length; ++i)
      for (int64_t j = 0; j < length; ++j)
        mask.push_back(builder.getFloatAttr(element, j > i ? -1e9 : 0.0));
    auto maskType = RankedTensorType::get({length, length}, element);
    Value m = arith::ConstantOp::create(builder, l, maskType,
                                        DenseElementsAttr::get(maskType, mask));
    SmallVector<int64_t> added(perm);
    added.push_back(s);
    Value wide = finish(
        nn::BroadcastOp::create(builder, l, typeOf({*heads, length, length}), m,
                                builder.getDenseI64ArrayAttr(added)));
    scores =
        wide ? finish(nn::AddOp::create(builder, l, scores, wide)) : nullptr;
  }
  if (!scores)
    return nullptr;
  Value weights = finish(nn::SoftmaxOp::create(
      builder, l, scores, builder.getI64IntegerAttr(rank)));
  Value context = weights ? finish(nn::MatmulOp::create(
                                builder, l, typeOf({*heads, length, width}),
                                weights, v, false, false))
                          : nullptr;
  if (!context)
    return nullptr;
  // [..., heads, S, width] -> [..., S, D]
  Value joined = finish(
      nn::TransposeOp::create(builder, l, typeOf({length, *heads, width}),
                              context, builder.getDenseI64ArrayAttr(toHeads)));
  joined = joined ? finish(nn::ReshapeOp::create(
                        builder, l, typeOf({length, features}), joined))
                  : nullptr;
  return joined ? project("o", joined) : nullptr;
}

Value ModelGenerator::finish(Operation *op) {
  if (failed(mlir::verify(op, /*verifyRecursively=*/false))) {
    op->erase();
    return nullptr;
  }
  return op->getResult(0);
}

bool ModelGenerator::requireFloat(Value v, const CallExpr &call) {
  if (isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType()))
    return true;
  diags.error(call.getLoc())
      << "'" << call.callee << "' needs a float tensor, got "
      << formatType(v.getType());
  return false;
}

bool ModelGenerator::requireRank(Value v, const CallExpr &call, int64_t minRank,
                                 StringRef layout) {
  if (cast<RankedTensorType>(v.getType()).getRank() >= minRank)
    return true;
  diags.error(call.getLoc())
      << "'" << call.callee << "' needs an input of "
      << "shape " << layout << ", got " << formatType(v.getType());
  return false;
}

//===----------------------------------------------------------------------===//
// Builtins
//===----------------------------------------------------------------------===//

/// Output size of a sliding window, or nullopt when it does not fit.
static std::optional<int64_t> windowSize(int64_t size, int64_t kernel,
                                         int64_t stride, int64_t padding) {
  int64_t padded = size + 2 * padding;
  if (padded < kernel)
    return std::nullopt;
  return (padded - kernel) / stride + 1;
}

Value ModelGenerator::genBuiltin(const CallExpr &call, Scope &scope) {
  StringRef callee = call.callee;
  Location l = loc(call.getLoc());
  auto tensorType = [](Value v) { return cast<RankedTensorType>(v.getType()); };

  // Elementwise functions of one tensor.
  using UnaryBuilder = std::function<Operation *(Value)>;
  llvm::StringMap<UnaryBuilder> unary = {
      {"relu", [&](Value x) { return nn::ReluOp::create(builder, l, x); }},
      {"tanh", [&](Value x) { return nn::TanhOp::create(builder, l, x); }},
      {"sigmoid",
       [&](Value x) { return nn::SigmoidOp::create(builder, l, x); }},
      {"gelu", [&](Value x) { return nn::GeluOp::create(builder, l, x); }},
      {"exp", [&](Value x) { return nn::ExpOp::create(builder, l, x); }},
      {"log", [&](Value x) { return nn::LogOp::create(builder, l, x); }},
      {"sqrt", [&](Value x) { return nn::SqrtOp::create(builder, l, x); }},
  };
  if (auto it = unary.find(callee); it != unary.end()) {
    if (!checkArguments(call, 1, 1, {}))
      return nullptr;
    Value x = genTensor(*call.args[0], scope, "an argument");
    if (!x || !requireFloat(x, call))
      return nullptr;
    return finish(it->second(x));
  }

  if (callee == "attention")
    return genAttention(call, scope);

  if (callee == "matmul") {
    if (!checkArguments(call, 2, 2, {}))
      return nullptr;
    Value a = genTensor(*call.args[0], scope, "an argument");
    Value b = genTensor(*call.args[1], scope, "an argument");
    if (!a || !b || !requireFloat(a, call) || !requireFloat(b, call))
      return nullptr;
    auto ta = tensorType(a), tb = tensorType(b);
    if (ta.getRank() < 2 || ta.getRank() != tb.getRank() ||
        ta.getShape().drop_back(2) != tb.getShape().drop_back(2) ||
        ta.getShape().back() != tb.getShape()[tb.getRank() - 2] ||
        ta.getElementType() != tb.getElementType()) {
      diags.error(call.getLoc()) << "'matmul' cannot multiply "
                                 << formatType(ta) << " by " << formatType(tb);
      return nullptr;
    }
    SmallVector<int64_t> shape(ta.getShape().drop_back());
    shape.push_back(tb.getShape().back());
    return finish(nn::MatmulOp::create(
        builder, l, RankedTensorType::get(shape, ta.getElementType()), a, b,
        false, false));
  }

  if (!checkArguments(call, 1, 3,
                      {"name", "bias", "kernel", "stride", "padding", "eps",
                       "axis", "dims", "shape", "permutation"}))
    return nullptr;
  Value x = genTensor(*call.args[0], scope, "an argument");
  if (!x)
    return nullptr;
  RankedTensorType xt = tensorType(x);
  Type element = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();

  auto onlyKeywords = [&](size_t positional,
                          ArrayRef<StringRef> allowed) -> bool {
    return checkArguments(call, positional, positional, allowed);
  };

  if (callee == "linear") {
    if (!onlyKeywords(2, {"name", "bias"}) || !requireFloat(x, call) ||
        !requireRank(x, call, 1, "[..., features]"))
      return nullptr;
    auto out = intValue(*call.args[1], "the output size of 'linear'", 1);
    auto bias = boolValue(keyword(call, "bias"), "'bias'", true);
    auto name = layerName(call, scope);
    if (!out || !bias || !name)
      return nullptr;
    int64_t in = xs.back();
    // Stop at the weight's error: the bias would repeat it.
    Value w = createParam(*name, "weight", {*out, in}, element,
                          "uniform_fan_in", in, call.getLoc());
    if (!w)
      return nullptr;
    Value b = *bias ? createParam(*name, "bias", {*out}, element,
                                  "uniform_fan_in", in, call.getLoc())
                    : Value();
    if (*bias && !b)
      return nullptr;
    SmallVector<int64_t> shape(xs.drop_back());
    shape.push_back(*out);
    return finish(nn::LinearOp::create(
        builder, l, RankedTensorType::get(shape, element), x, w, b));
  }

  if (callee == "conv2d") {
    if (!onlyKeywords(2, {"name", "bias", "kernel", "stride", "padding"}) ||
        !requireFloat(x, call) || !requireRank(x, call, 3, "[C, H, W]"))
      return nullptr;
    auto out = intValue(*call.args[1], "the output channels of 'conv2d'", 1);
    if (!keyword(call, "kernel")) {
      diags.error(call.getLoc()) << "'conv2d' needs a kernel size (kernel = k)";
      return nullptr;
    }
    auto kernel = intPair(keyword(call, "kernel"), "'kernel'", 1, 1);
    auto stride = intPair(keyword(call, "stride"), "'stride'", 1, 1);
    auto padding = intPair(keyword(call, "padding"), "'padding'", 0, 0);
    auto bias = boolValue(keyword(call, "bias"), "'bias'", true);
    if (!out || !kernel || !stride || !padding || !bias)
      return nullptr;
    int64_t rank = xs.size(), channels = xs[rank - 3];
    SmallVector<int64_t> shape(xs.drop_back(3));
    shape.push_back(*out);
    for (int i = 0; i < 2; ++i) {
      auto size = windowSize(xs[rank - 2 + i], (*kernel)[i], (*stride)[i],
                             (*padding)[i]);
      if (!size) {
        diags.error(call.getLoc())
            << "'conv2d' kernel [" << (*kernel)[0] << ", " << (*kernel)[1]
            << "] does not fit the input " << formatType(xt)
            << " with padding [" << (*padding)[0] << ", " << (*padding)[1]
            << "]";
        return nullptr;
      }
      shape.push_back(*size);
    }
    auto name = layerName(call, scope);
    if (!name)
      return nullptr;
    int64_t fanIn = channels * (*kernel)[0] * (*kernel)[1];
    Value w = createParam(*name, "weight",
                          {*out, channels, (*kernel)[0], (*kernel)[1]}, element,
                          "uniform_fan_in", fanIn, call.getLoc());
    if (!w)
      return nullptr;
    Value b = *bias ? createParam(*name, "bias", {*out}, element,
                                  "uniform_fan_in", fanIn, call.getLoc())
                    : Value();
    if (*bias && !b)
      return nullptr;
    return finish(
        nn::Conv2DOp::create(builder, l, RankedTensorType::get(shape, element),
                             x, w, b, builder.getDenseI64ArrayAttr(*stride),
                             builder.getDenseI64ArrayAttr(*padding)));
  }

  if (callee == "max_pool2d" || callee == "avg_pool2d") {
    if (!checkArguments(call, 1, 2, {"kernel", "stride", "padding"}) ||
        !requireFloat(x, call) || !requireRank(x, call, 3, "[C, H, W]"))
      return nullptr;
    const Expr *kernelExpr =
        call.args.size() > 1 ? call.args[1].get() : keyword(call, "kernel");
    if (!kernelExpr) {
      diags.error(call.getLoc()) << "'" << callee << "' needs a kernel size";
      return nullptr;
    }
    auto kernel = intPair(kernelExpr, "the pooling kernel", 1, 1);
    if (!kernel)
      return nullptr;
    auto stride = keyword(call, "stride")
                      ? intPair(keyword(call, "stride"), "'stride'", 1, 1)
                      : kernel;
    auto padding = intPair(keyword(call, "padding"), "'padding'", 0, 0);
    if (!stride || !padding)
      return nullptr;
    int64_t rank = xs.size();
    SmallVector<int64_t> shape(xs.drop_back(2));
    for (int i = 0; i < 2; ++i) {
      if ((*padding)[i] * 2 > (*kernel)[i]) {
        diags.error(call.getLoc()) << "'" << callee
                                   << "' padding must be at most half the "
                                      "kernel";
        return nullptr;
      }
      auto size = windowSize(xs[rank - 2 + i], (*kernel)[i], (*stride)[i],
                             (*padding)[i]);
      if (!size) {
        diags.error(call.getLoc())
            << "'" << callee << "' kernel [" << (*kernel)[0] << ", "
            << (*kernel)[1] << "] does not fit the input " << formatType(xt);
        return nullptr;
      }
      shape.push_back(*size);
    }
    auto type = RankedTensorType::get(shape, element);
    auto k = builder.getDenseI64ArrayAttr(*kernel);
    auto s = builder.getDenseI64ArrayAttr(*stride);
    auto p = builder.getDenseI64ArrayAttr(*padding);
    if (callee == "max_pool2d")
      return finish(nn::MaxPool2DOp::create(builder, l, type, x, k, s, p));
    return finish(nn::AvgPool2DOp::create(builder, l, type, x, k, s, p));
  }

  if (callee == "batch_norm" || callee == "layer_norm") {
    if (!onlyKeywords(1, {"name", "eps"}) || !requireFloat(x, call) ||
        !requireRank(x, call, 1,
                     callee == "batch_norm" ? "[C, ...]" : "[..., D]"))
      return nullptr;
    double eps = 1e-5;
    if (const Expr *e = keyword(call, "eps")) {
      auto v = numberValue(*e, "'eps'");
      if (!v)
        return nullptr;
      if (!(*v >= 0)) {
        diags.error(e->getLoc()) << "'eps' must be >= 0";
        return nullptr;
      }
      eps = *v;
    }
    auto name = layerName(call, scope);
    if (!name)
      return nullptr;
    bool batch = callee == "batch_norm";
    int64_t features = batch ? xs.front() : xs.back();
    Value w = createParam(*name, "weight", {features}, element, "ones", 0,
                          call.getLoc());
    if (!w)
      return nullptr;
    Value b = createParam(*name, "bias", {features}, element, "zeros", 0,
                          call.getLoc());
    if (!b)
      return nullptr;
    if (!batch)
      return finish(nn::LayerNormOp::create(builder, l, xt, x, w, b,
                                            builder.getF64FloatAttr(eps)));
    // Per sample, channels lead; statistics cover the spatial dimensions
    // (and, once vectorised, the sample axis).
    SmallVector<int64_t> reduce;
    for (int64_t d = 1; d < xt.getRank(); ++d)
      reduce.push_back(d);
    return finish(nn::BatchNormOp::create(
        builder, l, xt, x, w, b, builder.getI64IntegerAttr(0),
        builder.getDenseI64ArrayAttr(reduce), builder.getF64FloatAttr(eps)));
  }

  if (callee == "embedding") {
    if (!onlyKeywords(3, {"name"}))
      return nullptr;
    if (!isa<IntegerType>(element)) {
      diags.error(call.getLoc())
          << "'embedding' needs integer ids, got " << formatType(xt);
      return nullptr;
    }
    auto vocab = intValue(*call.args[1], "the vocabulary size", 1);
    auto dim = intValue(*call.args[2], "the embedding size", 1);
    auto name = layerName(call, scope);
    if (!vocab || !dim || !name)
      return nullptr;
    Value table = createParam(*name, "weight", {*vocab, *dim}, paramElementType,
                              "normal", 0, call.getLoc());
    if (!table)
      return nullptr;
    SmallVector<int64_t> shape(xs);
    shape.push_back(*dim);
    return finish(nn::EmbeddingOp::create(
        builder, l, RankedTensorType::get(shape, paramElementType), x, table));
  }

  if (!requireFloat(x, call))
    return nullptr;

  auto normaliseAxis = [&](int64_t axis,
                           const Expr &where) -> std::optional<int64_t> {
    int64_t rank = xt.getRank();
    if (axis < -rank || axis >= rank) {
      diags.error(where.getLoc())
          << "axis " << axis << " is out of range for " << formatType(xt);
      return std::nullopt;
    }
    return axis < 0 ? axis + rank : axis;
  };

  if (callee == "softmax" || callee == "log_softmax") {
    if (!onlyKeywords(1, {"axis"}) ||
        !requireRank(x, call, 1, "with at least one dimension"))
      return nullptr;
    int64_t axis = xt.getRank() - 1;
    if (const Expr *e = keyword(call, "axis")) {
      auto v = intValue(*e, "'axis'", -(int64_t(1) << 31));
      auto n = v ? normaliseAxis(*v, *e) : std::nullopt;
      if (!n)
        return nullptr;
      axis = *n;
    }
    auto a = builder.getI64IntegerAttr(axis);
    if (callee == "softmax")
      return finish(nn::SoftmaxOp::create(builder, l, x, a));
    return finish(nn::LogSoftmaxOp::create(builder, l, x, a));
  }

  if (callee == "flatten" || callee == "reshape") {
    SmallVector<int64_t> shape{xt.getNumElements()};
    if (callee == "reshape") {
      if (!checkArguments(call, 1, 2, {"shape"}))
        return nullptr;
      const Expr *e =
          call.args.size() > 1 ? call.args[1].get() : keyword(call, "shape");
      if (!e) {
        diags.error(call.getLoc()) << "'reshape' needs a shape";
        return nullptr;
      }
      auto s = intList(*e, "the shape of 'reshape'");
      if (!s)
        return nullptr;
      int64_t count = 1;
      for (int64_t d : *s) {
        if (d < 1) {
          diags.error(e->getLoc())
              << "dimension sizes must be positive, got " << d;
          return nullptr;
        }
        count = count > xt.getNumElements() ? count : count * d;
      }
      if (count != xt.getNumElements()) {
        diags.error(e->getLoc()) << "'reshape' cannot turn " << formatType(xt)
                                 << " into a shape with another element count";
        return nullptr;
      }
      shape = *s;
    } else if (!onlyKeywords(1, {})) {
      return nullptr;
    }
    return finish(nn::ReshapeOp::create(
        builder, l, RankedTensorType::get(shape, element), x));
  }

  if (callee == "transpose") {
    if (!checkArguments(call, 1, 2, {"permutation"}))
      return nullptr;
    SmallVector<int64_t> perm;
    if (const Expr *e = call.args.size() > 1 ? call.args[1].get()
                                             : keyword(call, "permutation")) {
      auto p = intList(*e, "the permutation");
      if (!p)
        return nullptr;
      perm = *p;
    } else {
      // Default: swap the last two dimensions.
      for (int64_t i = 0; i < xt.getRank(); ++i)
        perm.push_back(i);
      if (perm.size() < 2) {
        diags.error(call.getLoc()) << "'transpose' needs a rank >= 2 input";
        return nullptr;
      }
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    }
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(p >= 0 && p < xt.getRank() ? xs[p] : 1);
    return finish(nn::TransposeOp::create(
        builder, l, RankedTensorType::get(shape, element), x,
        builder.getDenseI64ArrayAttr(perm)));
  }

  // sum / mean over dimensions.
  if (!checkArguments(call, 1, 2, {"dims"}))
    return nullptr;
  SmallVector<int64_t> dims;
  if (const Expr *e =
          call.args.size() > 1 ? call.args[1].get() : keyword(call, "dims")) {
    auto d = intList(*e, "the reduced dimensions");
    if (!d)
      return nullptr;
    for (int64_t v : *d) {
      auto n = normaliseAxis(v, *e);
      if (!n)
        return nullptr;
      dims.push_back(*n);
    }
    llvm::sort(dims);
    if (std::adjacent_find(dims.begin(), dims.end()) != dims.end()) {
      diags.error(e->getLoc()) << "a dimension is reduced twice";
      return nullptr;
    }
  } else {
    for (int64_t i = 0; i < xt.getRank(); ++i)
      dims.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      shape.push_back(xs[i]);
  auto type = RankedTensorType::get(shape, element);
  auto d = builder.getDenseI64ArrayAttr(dims);
  if (callee == "sum")
    return finish(nn::ReduceSumOp::create(builder, l, type, x, d));
  return finish(nn::ReduceMeanOp::create(builder, l, type, x, d));
}

func::FuncOp metac::frontend::generateModel(
    const FunctionDecl &model,
    const llvm::StringMap<const FunctionDecl *> &blocks,
    SourceDiagnostics &diags, OpBuilder &builder) {
  return ModelGenerator(blocks, diags, builder).generate(model);
}
