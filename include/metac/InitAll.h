//===- InitAll.h - registration of metac and upstream pieces ----*- C++ -*-===//

#ifndef METAC_INITALL_H
#define METAC_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace metac {

/// Registers the `meta` and `nn` dialects and the upstream dialects that
/// metac's phases produce.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers metac's passes and pipelines and the upstream passes they use,
/// for `metac-opt`.
void registerAllPasses();

} // namespace metac

#endif // METAC_INITALL_H
