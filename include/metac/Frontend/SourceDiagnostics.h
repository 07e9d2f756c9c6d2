//===- SourceDiagnostics.h - located frontend errors ------------*- C++ -*-===//
//
// Positions in a spec and the bridge from them to MLIR's diagnostic engine, so
// frontend errors print as `file:line:col: error: ...` with the source line
// and a caret, and `-verify-diagnostics` can check them.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_FRONTEND_SOURCEDIAGNOSTICS_H
#define METAC_FRONTEND_SOURCEDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace metac::frontend {

/// A 1-based line and column in the spec.
struct SourceLoc {
  unsigned line = 0;
  unsigned column = 0;
};

class SourceDiagnostics {
public:
  SourceDiagnostics(mlir::MLIRContext *context, llvm::StringRef filename)
      : context(context), filename(filename.str()) {}

  mlir::Location getLocation(SourceLoc loc) const;
  mlir::InFlightDiagnostic error(SourceLoc loc);
  mlir::InFlightDiagnostic error(SourceLoc loc, const llvm::Twine &message);
  unsigned getErrorCount() const { return errorCount; }
  mlir::MLIRContext *getContext() const { return context; }
  llvm::StringRef getFilename() const { return filename; }

  /// Stops reporting after this many errors (a binary file would otherwise
  /// produce one per byte).
  static constexpr unsigned kMaxErrors = 20;

private:
  mlir::MLIRContext *context;
  std::string filename;
  unsigned errorCount = 0;
};

/// The candidate closest to `name` by edit distance, if it is close enough to
/// be a plausible typo; empty otherwise.
llvm::StringRef findClosestName(llvm::StringRef name,
                                llvm::ArrayRef<llvm::StringRef> candidates);

/// Appends "; did you mean 'x'?" when a close candidate exists.
void attachDidYouMean(mlir::InFlightDiagnostic &diag, llvm::StringRef name,
                      llvm::ArrayRef<llvm::StringRef> candidates);

} // namespace metac::frontend

#endif // METAC_FRONTEND_SOURCEDIAGNOSTICS_H
