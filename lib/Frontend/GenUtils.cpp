//===- GenUtils.cpp - helpers shared by the MLIRGen files -----------------===//

#include "GenUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <charconv>

using namespace mlir;
using namespace metac::frontend;

std::string metac::frontend::formatType(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor) {
    os << type;
    return s;
  }
  os << tensor.getElementType() << '[';
  llvm::interleaveComma(tensor.getShape(), os);
  os << ']';
  return s;
}

std::string metac::frontend::formatNumber(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return error == std::errc() ? std::string(buffer, end) : std::string("?");
}

/// Types with more elements than this are certainly a mistake, and would
/// overflow size computations further down.
static constexpr int64_t kMaxElements = int64_t(1) << 40;

RankedTensorType metac::frontend::convertType(const TypeSpec &spec,
                                              SourceDiagnostics &diags) {
  MLIRContext *ctx = diags.getContext();
  Type element = llvm::StringSwitch<Type>(spec.elementType)
                     .Case("f32", Float32Type::get(ctx))
                     .Case("f64", Float64Type::get(ctx))
                     .Case("f16", Float16Type::get(ctx))
                     .Case("bf16", BFloat16Type::get(ctx))
                     .Case("i32", IntegerType::get(ctx, 32))
                     .Case("i64", IntegerType::get(ctx, 64))
                     .Default(Type());
  if (!element) {
    InFlightDiagnostic diag = diags.error(spec.loc);
    diag << "unknown element type '" << spec.elementType
         << "' (expected f32, f64, f16, bf16, i32 or i64)";
    attachDidYouMean(diag, spec.elementType,
                     {"f32", "f64", "f16", "bf16", "i32", "i64"});
    return nullptr;
  }
  int64_t elements = 1;
  for (int64_t d : spec.shape) {
    if (d <= 0) {
      diags.error(spec.loc) << "dimension sizes must be positive, got " << d;
      return nullptr;
    }
    if (elements > kMaxElements / d) {
      diags.error(spec.loc) << "type has more than 2^40 elements";
      return nullptr;
    }
    elements *= d;
  }
  return RankedTensorType::get(spec.shape, element);
}

//===----------------------------------------------------------------------===//
// FieldReader
//===----------------------------------------------------------------------===//

FieldReader::FieldReader(SourceDiagnostics &diags,
                         const std::vector<Field> &fields, llvm::StringRef what,
                         SourceLoc declLoc,
                         llvm::ArrayRef<llvm::StringRef> known)
    : diags(diags), fields(fields), what(what.str()), declLoc(declLoc) {
  llvm::StringMap<SourceLoc> seen;
  for (const Field &field : fields) {
    if (!llvm::is_contained(known, field.name)) {
      InFlightDiagnostic diag = diags.error(field.loc);
      diag << "unknown field '" << field.name << "' in " << what;
      llvm::StringRef closest = findClosestName(field.name, known);
      if (!closest.empty()) {
        diag << "; did you mean '" << closest << "'?";
        suggested.insert(closest);
      }
      failed = true;
      continue;
    }
    auto [it, inserted] = seen.try_emplace(field.name, field.loc);
    if (!inserted) {
      InFlightDiagnostic diag = diags.error(field.loc);
      diag << "duplicate field '" << field.name << "' in " << what;
      diag.attachNote(diags.getLocation(it->second)) << "first given here";
      failed = true;
    }
  }
}

const Field *FieldReader::find(llvm::StringRef name) const {
  for (const Field &field : fields)
    if (field.name == name)
      return &field;
  return nullptr;
}

void FieldReader::missing(llvm::StringRef name) {
  failed = true;
  // "unknown field 'modle'; did you mean 'model'?" already said it.
  if (!suggested.contains(name))
    diags.error(declLoc) << what << " needs a field '" << name << "'";
}

InFlightDiagnostic FieldReader::error(const Field &field) {
  failed = true;
  return diags.error(field.value ? field.value->loc : field.loc);
}

FailureOr<const Field *>
FieldReader::lookup(llvm::StringRef name, bool required,
                    llvm::function_ref<bool(const ConfigValue &)> accepts,
                    llvm::StringRef expects) {
  const Field *field = find(name);
  if (!field) {
    if (required)
      missing(name);
    return static_cast<const Field *>(nullptr);
  }
  if (!field->value || !accepts(*field->value)) {
    error(*field) << "field '" << name << "' of " << what << " expects "
                  << expects;
    return failure();
  }
  return field;
}

std::optional<int64_t> FieldReader::integer(llvm::StringRef name,
                                            std::optional<int64_t> def,
                                            int64_t min) {
  FailureOr<const Field *> found = lookup(
      name, !def,
      [](const ConfigValue &v) { return v.kind == ConfigValue::Kind::Integer; },
      "an integer");
  if (mlir::failed(found))
    return std::nullopt;
  const Field *field = *found;
  if (!field)
    return def;
  if (field->value->intValue < min) {
    error(*field) << "field '" << name << "' of " << what
                  << " must be >= " << min << ", got "
                  << field->value->intValue;
    return std::nullopt;
  }
  return field->value->intValue;
}

std::optional<double> FieldReader::number(llvm::StringRef name,
                                          std::optional<double> def,
                                          bool positive) {
  FailureOr<const Field *> found = lookup(
      name, !def, [](const ConfigValue &v) { return v.isNumber(); },
      "a number");
  if (mlir::failed(found))
    return std::nullopt;
  const Field *field = *found;
  if (!field)
    return def;
  double v = field->value->asDouble();
  if (positive ? !(v > 0) : !(v >= 0)) {
    error(*field) << "field '" << name << "' of " << what << " must be "
                  << (positive ? "> 0" : ">= 0") << ", got " << formatNumber(v);
    return std::nullopt;
  }
  return v;
}

std::optional<std::pair<double, double>>
FieldReader::range(llvm::StringRef name, std::pair<double, double> def) {
  const Field *field = find(name);
  if (!field)
    return def;
  const ConfigValue *v = field->value.get();
  if (!v || v->kind != ConfigValue::Kind::List || v->elements.size() != 2 ||
      !v->elements[0]->isNumber() || !v->elements[1]->isNumber()) {
    error(*field) << "field '" << name << "' of " << what
                  << " expects a range [low, high]";
    return std::nullopt;
  }
  double lo = v->elements[0]->asDouble(), hi = v->elements[1]->asDouble();
  if (lo > hi) {
    error(*field) << "range '" << name << "' of " << what
                  << " has low > high: [" << formatNumber(lo) << ", "
                  << formatNumber(hi) << "]";
    return std::nullopt;
  }
  return std::make_pair(lo, hi);
}

std::optional<std::string> FieldReader::string(llvm::StringRef name,
                                               std::optional<std::string> def) {
  FailureOr<const Field *> found = lookup(
      name, !def,
      [](const ConfigValue &v) { return v.kind == ConfigValue::Kind::String; },
      "a string");
  if (mlir::failed(found))
    return std::nullopt;
  const Field *field = *found;
  if (!field)
    return def;
  return field->value->text;
}

std::optional<std::string> FieldReader::name(llvm::StringRef name,
                                             std::optional<std::string> def) {
  FailureOr<const Field *> found = lookup(
      name, !def,
      [](const ConfigValue &v) { return v.kind == ConfigValue::Kind::Name; },
      "a name");
  if (mlir::failed(found))
    return std::nullopt;
  const Field *field = *found;
  if (!field)
    return def;
  return field->value->text;
}

std::optional<std::vector<int64_t>>
FieldReader::integerList(llvm::StringRef name,
                         std::optional<std::vector<int64_t>> def, int64_t min) {
  const Field *field = find(name);
  if (!field) {
    if (!def)
      missing(name);
    return def;
  }
  const ConfigValue *v = field->value.get();
  std::vector<int64_t> result;
  if (v && v->kind == ConfigValue::Kind::List) {
    for (const ConfigValuePtr &element : v->elements) {
      if (element->kind != ConfigValue::Kind::Integer) {
        error(*field) << "field '" << name << "' of " << what
                      << " expects a list of integers";
        return std::nullopt;
      }
      if (element->intValue < min) {
        error(*field) << "field '" << name << "' of " << what
                      << " needs values >= " << min << ", got "
                      << element->intValue;
        return std::nullopt;
      }
      result.push_back(element->intValue);
    }
    return result;
  }
  error(*field) << "field '" << name << "' of " << what
                << " expects a list of integers";
  return std::nullopt;
}
