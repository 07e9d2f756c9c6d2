//===- RuntimeSymbols.h - the metart functions JIT code may call -*- C++
//-*-===//

#ifndef METAC_LIB_RUNNER_RUNTIMESYMBOLS_H
#define METAC_LIB_RUNNER_RUNTIMESYMBOLS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace metac {

struct RuntimeSymbol {
  llvm::StringLiteral name;
  void *address;
};

/// Every function of the metart C API that lowered code calls.
llvm::ArrayRef<RuntimeSymbol> getRuntimeSymbols();

} // namespace metac

#endif // METAC_LIB_RUNNER_RUNTIMESYMBOLS_H
