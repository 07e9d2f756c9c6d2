//===- GradientCheck.h - finite-difference checks of the autodiff -*- C++
//-*-===//
//
// Checks the gradients metac's autodiff produces for a function against
// central finite differences, both evaluated with the reference interpreter.
// First order: L(x) = sum_j <W_j, f_j(x)> with fixed random W, its gradient
// by `meta.grad` against (L(x + h e) - L(x - h e)) / 2h for every element.
// Second order: H(x) = sum_i <V_i, dL/dx_i(x)> with fixed random V, its
// gradient through nested `meta.grad` (the VJP of the VJP) against finite
// differences of H.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_TESTING_GRADIENTCHECK_H
#define METAC_TESTING_GRADIENTCHECK_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/raw_ostream.h"

namespace metac::testing {

struct GradientCheckOptions {
  /// 1: gradients; 2: also gradients of gradients.
  int order = 2;
  /// Seed of the inputs (the interpreter's splitmix64 stream) and weights.
  uint64_t seed = 1;
  /// Finite-difference step, relative to max(1, |x|).
  double step = 1e-6;
  /// Accepted |analytic - numeric| / max(1, |numeric|).
  double tolerance = 1e-6;
};

struct GradientCheckResult {
  /// Largest scaled error and number of partial derivatives, per order.
  double maxError[2] = {0, 0};
  int64_t partials[2] = {0, 0};
  bool passed = false;
};

/// Checks `func`'s derivatives (with respect to its float arguments; integer
/// arguments are held fixed). `func` is left unchanged. Fails, with a
/// diagnostic, when the function cannot be differentiated or evaluated.
mlir::FailureOr<GradientCheckResult>
checkGradients(mlir::func::FuncOp func, const GradientCheckOptions &options);

} // namespace metac::testing

#endif // METAC_TESTING_GRADIENTCHECK_H
