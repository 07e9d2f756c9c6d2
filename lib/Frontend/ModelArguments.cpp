//===- ModelArguments.cpp - call arguments and parameters of models -------===//
//
// How the model generator reads a call's positional and keyword arguments
// (integers, pairs, lists, booleans, with errors at their location), names
// layers, and creates parameters as leading arguments of the model.
//
//===----------------------------------------------------------------------===//

#include "ModelGenerator.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

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

bool ModelGenerator::isLayerName(StringRef name) {
  return !name.empty() && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.';
  });
}

std::optional<std::string> ModelGenerator::layerName(const CallExpr &call,
                                                     Scope &scope) {
  std::string base;
  if (const Expr *named = keyword(call, "name")) {
    auto *str = dyn_cast<StringExpr>(named);
    if (!str || !isLayerName(str->value)) {
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

std::optional<int64_t> ModelGenerator::normaliseAxis(RankedTensorType type,
                                                     int64_t axis,
                                                     const Expr &where) {
  int64_t rank = type.getRank();
  if (axis < -rank || axis >= rank) {
    diags.error(where.getLoc())
        << "axis " << axis << " is out of range for " << formatType(type);
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}
