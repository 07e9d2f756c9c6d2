//===- GenUtils.h - helpers shared by the MLIRGen files ----------*- C++
//-*-===//

#ifndef METAC_LIB_FRONTEND_GENUTILS_H
#define METAC_LIB_FRONTEND_GENUTILS_H

#include "metac/Frontend/AST.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <optional>

namespace metac::frontend {

/// `f32[1, 28, 28]`: how the spec writes a type, used in every message.
std::string formatType(mlir::Type type);

/// A number as a spec would write it: `0.5`, `5`, `1e-08` (the shortest
/// form that reads back exactly), where diagnostics would print `5.000000e-01`.
std::string formatNumber(double value);

/// The tensor type a spec type names; reports and returns null when the
/// element type is unknown or a dimension is not positive.
mlir::RankedTensorType convertType(const TypeSpec &spec,
                                   SourceDiagnostics &diags);

/// Reads the fields of a record (a `tasks` body, `train` body, `maml { ... }`)
/// with checks: unknown and duplicate fields are reported on construction;
/// typed getters report a wrong kind or an out-of-range value at the field.
class FieldReader {
public:
  FieldReader(SourceDiagnostics &diags, const std::vector<Field> &fields,
              llvm::StringRef what, SourceLoc declLoc,
              llvm::ArrayRef<llvm::StringRef> known);

  const Field *find(llvm::StringRef name) const;
  bool has(llvm::StringRef name) const { return find(name) != nullptr; }

  /// An integer >= `min`; `def` when absent (required when `def` is empty).
  std::optional<int64_t> integer(llvm::StringRef name,
                                 std::optional<int64_t> def, int64_t min);
  /// A number (integer or float) > 0 (when `positive`) or >= 0.
  std::optional<double> number(llvm::StringRef name, std::optional<double> def,
                               bool positive);
  /// A two-element numeric list `[lo, hi]` with lo <= hi.
  std::optional<std::pair<double, double>> range(llvm::StringRef name,
                                                 std::pair<double, double> def);
  std::optional<std::string> string(llvm::StringRef name,
                                    std::optional<std::string> def);
  /// A bare name such as `regressor` or `mse`.
  std::optional<std::string> name(llvm::StringRef name,
                                  std::optional<std::string> def);
  std::optional<std::vector<int64_t>>
  integerList(llvm::StringRef name, std::optional<std::vector<int64_t>> def,
              int64_t min);

  /// Reports that a required field is missing.
  void missing(llvm::StringRef name);
  /// Reports a bad value at a field.
  mlir::InFlightDiagnostic error(const Field &field);

  bool hadError() const { return failed; }
  llvm::StringRef getWhat() const { return what; }
  SourceDiagnostics &getDiags() { return diags; }

private:
  /// The field `name` when present with a value `accepts` takes; null when
  /// absent (reported when `required`); failure, reported as not being
  /// `expects`, otherwise.
  mlir::FailureOr<const Field *>
  lookup(llvm::StringRef name, bool required,
         llvm::function_ref<bool(const ConfigValue &)> accepts,
         llvm::StringRef expects);

  SourceDiagnostics &diags;
  const std::vector<Field> &fields;
  std::string what;
  SourceLoc declLoc;
  bool failed = false;
  /// Fields suggested for unknown ones: not reported missing as well.
  llvm::StringSet<> suggested;
};

} // namespace metac::frontend

#endif // METAC_LIB_FRONTEND_GENUTILS_H
