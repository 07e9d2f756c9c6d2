//===- Elementwise.cpp - elementwise nn ops in the interpreter ------------===//
//
// Unary maps, `nn.scale`, the four binary operations, `nn.convert` (a
// rounding) and `nn.stop_gradient` (the identity when evaluating).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;

namespace metac::interp::detail {

/// Applies `fn` to every element of `value`'s tensor.
static Tensor map(const Frame &frame, Value value,
                  llvm::function_ref<double(double)> fn) {
  Tensor result = frame.get(value);
  for (double &x : result.values)
    x = fn(x);
  return result;
}

/// Combines the elements of two tensors of one shape pairwise with `fn`.
static Tensor zip(const Frame &frame, Value lhs, Value rhs,
                  llvm::function_ref<double(double, double)> fn) {
  Tensor result = frame.get(lhs);
  const Tensor &b = frame.get(rhs);
  for (size_t i = 0, e = result.values.size(); i < e; ++i)
    result.values[i] = fn(result.values[i], b.values[i]);
  return result;
}

FailureOr<Tensor> evaluateOp(nn::NegOp op, const Frame &frame) {
  return map(frame, op.getInput(), [](double x) { return -x; });
}

FailureOr<Tensor> evaluateOp(nn::ExpOp op, const Frame &frame) {
  return map(frame, op.getInput(), [](double x) { return std::exp(x); });
}

FailureOr<Tensor> evaluateOp(nn::LogOp op, const Frame &frame) {
  return map(frame, op.getInput(), [](double x) { return std::log(x); });
}

FailureOr<Tensor> evaluateOp(nn::SqrtOp op, const Frame &frame) {
  return map(frame, op.getInput(), [](double x) { return std::sqrt(x); });
}

FailureOr<Tensor> evaluateOp(nn::RsqrtOp op, const Frame &frame) {
  return map(frame, op.getInput(), [](double x) { return 1.0 / std::sqrt(x); });
}

FailureOr<Tensor> evaluateOp(nn::ErfOp op, const Frame &frame) {
  return map(frame, op.getInput(), [](double x) { return std::erf(x); });
}

FailureOr<Tensor> evaluateOp(nn::ReluOp op, const Frame &frame) {
  // Written so that NaN propagates, as in PyTorch.
  return map(frame, op.getInput(), [](double x) { return x < 0 ? 0.0 : x; });
}

FailureOr<Tensor> evaluateOp(nn::StepOp op, const Frame &frame) {
  return map(frame, op.getInput(), [](double x) { return x > 0 ? 1.0 : 0.0; });
}

FailureOr<Tensor> evaluateOp(nn::TanhOp op, const Frame &frame) {
  return map(frame, op.getInput(), [](double x) { return std::tanh(x); });
}

FailureOr<Tensor> evaluateOp(nn::SigmoidOp op, const Frame &frame) {
  return map(frame, op.getInput(),
             [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}

FailureOr<Tensor> evaluateOp(nn::GeluOp op, const Frame &frame) {
  // x * Phi(x), Phi the standard normal CDF: 0.5 * (1 + erf(x / sqrt(2))).
  return map(frame, op.getInput(), [](double x) {
    return x * 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
  });
}

FailureOr<Tensor> evaluateOp(nn::ScaleOp op, const Frame &frame) {
  double factor = op.getFactor().convertToDouble();
  return map(frame, op.getInput(), [&](double x) { return factor * x; });
}

FailureOr<Tensor> evaluateOp(nn::ConvertOp op, const Frame &frame) {
  Tensor result = frame.get(op.getInput());
  roundTo(result, getElementTypeOrSelf(op.getType()));
  return result;
}

FailureOr<Tensor> evaluateOp(nn::StopGradientOp op, const Frame &frame) {
  return frame.get(op.getInput());
}

FailureOr<Tensor> evaluateOp(nn::AddOp op, const Frame &frame) {
  return zip(frame, op.getLhs(), op.getRhs(),
             [](double a, double b) { return a + b; });
}

FailureOr<Tensor> evaluateOp(nn::SubOp op, const Frame &frame) {
  return zip(frame, op.getLhs(), op.getRhs(),
             [](double a, double b) { return a - b; });
}

FailureOr<Tensor> evaluateOp(nn::MulOp op, const Frame &frame) {
  return zip(frame, op.getLhs(), op.getRhs(),
             [](double a, double b) { return a * b; });
}

FailureOr<Tensor> evaluateOp(nn::DivOp op, const Frame &frame) {
  return zip(frame, op.getLhs(), op.getRhs(),
             [](double a, double b) { return a / b; });
}

} // namespace metac::interp::detail
