//===- Resolve.h - overrides and constants of a parsed spec -----*- C++ -*-===//
//
// Between parsing and code generation a spec is resolved: `--set PATH=VALUE`
// replaces constants and fields (so that one spec serves a whole benchmark
// matrix), then every use of a constant's name becomes its value.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_FRONTEND_RESOLVE_H
#define METAC_FRONTEND_RESOLVE_H

#include "metac/Frontend/AST.h"

#include "llvm/ADT/ArrayRef.h"

namespace metac::frontend {

/// Applies settings `PATH=VALUE`, where PATH is a constant's name
/// (`width=160`) or a task distribution's or training program's name
/// followed by field names (`maml_sine.meta_batch=50`,
/// `maml_sine.algorithm.steps=5`, `maml_sine.algorithm=fomaml { steps = 1 }`)
/// and VALUE is written as in a spec. A missing last field is added; the
/// code generator checks it as if the spec had it. Errors name the setting.
mlir::LogicalResult applyOverrides(Module &module,
                                   llvm::ArrayRef<std::string> settings,
                                   mlir::MLIRContext *context);

/// Replaces the names of constants in model and block bodies, repeat
/// counts and field values by the constants' values. A constant that
/// clashes with a declaration or is assigned in a body is an error.
mlir::LogicalResult resolveConstants(Module &module, SourceDiagnostics &diags);

} // namespace metac::frontend

#endif // METAC_FRONTEND_RESOLVE_H
