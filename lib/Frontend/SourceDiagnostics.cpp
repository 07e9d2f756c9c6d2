//===- SourceDiagnostics.cpp - located frontend errors --------------------===//

#include "metac/Frontend/SourceDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;
using namespace metac::frontend;

Location SourceDiagnostics::getLocation(SourceLoc loc) const {
  return FileLineColLoc::get(context, filename, loc.line, loc.column);
}

InFlightDiagnostic SourceDiagnostics::error(SourceLoc loc) {
  ++errorCount;
  if (errorCount == kMaxErrors + 1)
    return emitError(getLocation(loc))
           << "too many errors; stopping after " << kMaxErrors;
  InFlightDiagnostic diag = emitError(getLocation(loc));
  if (errorCount > kMaxErrors + 1)
    diag.abandon();
  return diag;
}

InFlightDiagnostic SourceDiagnostics::error(SourceLoc loc,
                                            const llvm::Twine &message) {
  InFlightDiagnostic diag = error(loc);
  if (errorCount <= kMaxErrors)
    diag << message;
  return diag;
}

llvm::StringRef
metac::frontend::findClosestName(llvm::StringRef name,
                                 llvm::ArrayRef<llvm::StringRef> candidates) {
  llvm::StringRef best;
  unsigned bestDistance = ~0u;
  // Allow roughly one edit per three characters, at least one.
  unsigned limit = std::max<unsigned>(1, name.size() / 3);
  for (llvm::StringRef candidate : candidates) {
    unsigned distance = name.edit_distance(candidate, true, limit + 1);
    if (distance <= limit && distance < bestDistance && candidate != name) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

void metac::frontend::attachDidYouMean(
    InFlightDiagnostic &diag, llvm::StringRef name,
    llvm::ArrayRef<llvm::StringRef> candidates) {
  llvm::StringRef closest = findClosestName(name, candidates);
  if (!closest.empty())
    diag << "; did you mean '" << closest << "'?";
}
