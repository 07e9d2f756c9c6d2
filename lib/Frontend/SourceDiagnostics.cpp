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
  // The limit gets its own diagnostic; the caller's message, streamed into the
  // returned one, must not be appended to it.
  if (errorCount == kMaxErrors + 1)
    emitError(getLocation(loc))
        << "too many errors; stopping after " << kMaxErrors;
  InFlightDiagnostic diag = emitError(getLocation(loc));
  if (errorCount > kMaxErrors)
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

/// Whether `a` is `b` with two adjacent characters swapped ("reul" for
/// "relu"): one typo, though two edits for edit_distance.
static bool isTransposition(llvm::StringRef a, llvm::StringRef b) {
  if (a.size() != b.size())
    return false;
  size_t i = 0;
  while (i < a.size() && a[i] == b[i])
    ++i;
  return i + 1 < a.size() && a[i] == b[i + 1] && a[i + 1] == b[i] &&
         a.drop_front(i + 2) == b.drop_front(i + 2);
}

llvm::StringRef
metac::frontend::findClosestName(llvm::StringRef name,
                                 llvm::ArrayRef<llvm::StringRef> candidates) {
  llvm::StringRef best;
  unsigned bestDistance = ~0u;
  // Allow roughly one edit per three characters, at least one.
  unsigned limit = std::max<unsigned>(1, name.size() / 3);
  for (llvm::StringRef candidate : candidates) {
    unsigned distance = isTransposition(name, candidate)
                            ? 1
                            : name.edit_distance(candidate, true, limit + 1);
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
