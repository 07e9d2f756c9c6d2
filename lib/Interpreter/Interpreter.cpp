//===- Interpreter.cpp - the interpreter's driver and dispatch ------------===//
//
// Checks the inputs against the function's signature, then walks the body
// op by op: constants, nn ops (through the `evaluateOp` overloads of
// Kernels.h), calls of functions of the same module, and the return.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/InterleavedRange.h"

using namespace mlir;

namespace metac::interp {

using detail::Frame;

namespace {
/// Evaluates functions, keeping the stack of active calls to reject
/// recursion (which, without control flow, never terminates).
class Evaluator {
public:
  /// Evaluates `func` on `inputs`, which match its signature.
  FailureOr<std::vector<Tensor>> call(func::FuncOp func,
                                      ArrayRef<Tensor> inputs);

private:
  /// Evaluates the body of `func` in `frame`, which binds its arguments.
  FailureOr<std::vector<Tensor>> run(func::FuncOp func, Frame &frame);
  /// Evaluates one op of a function body and binds its results.
  LogicalResult step(Operation *op, Frame &frame);
  /// Evaluates a `func.call`.
  LogicalResult step(func::CallOp op, Frame &frame);

  SmallVector<Operation *> active;
};
} // namespace

FailureOr<std::vector<Tensor>> Evaluator::call(func::FuncOp func,
                                               ArrayRef<Tensor> inputs) {
  Frame frame;
  for (auto [argument, input] : llvm::zip_equal(func.getArguments(), inputs))
    frame.bind(argument, input);
  active.push_back(func);
  FailureOr<std::vector<Tensor>> results = run(func, frame);
  active.pop_back();
  return results;
}

FailureOr<std::vector<Tensor>> Evaluator::run(func::FuncOp func, Frame &frame) {
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      std::vector<Tensor> results;
      for (Value value : ret.getOperands())
        results.push_back(frame.get(value));
      return results;
    }
    if (failed(step(&op, frame)))
      return failure();
  }
  return func.emitError("function body does not end with func.return");
}

LogicalResult Evaluator::step(func::CallOp op, Frame &frame) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      op, op.getCalleeAttr());
  if (!callee)
    return op.emitError("callee ")
           << op.getCalleeAttr() << " is not a func.func";
  if (callee.isExternal())
    return op.emitError("cannot evaluate a call of external function ")
           << op.getCalleeAttr() << ": it has no body";
  if (!callee.getBody().hasOneBlock())
    return op.emitError("cannot evaluate a call of ")
           << op.getCalleeAttr()
           << ": only functions of a single block are supported";
  if (llvm::is_contained(active, callee.getOperation()))
    return op.emitError("recursive call of ")
           << op.getCalleeAttr() << " is not supported";
  std::vector<Tensor> inputs;
  for (Value operand : op.getOperands())
    inputs.push_back(frame.get(operand));
  FailureOr<std::vector<Tensor>> results = call(callee, inputs);
  if (failed(results)) {
    op.emitRemark("in this call of ") << op.getCalleeAttr();
    return failure();
  }
  for (auto [value, tensor] : llvm::zip_equal(op.getResults(), *results))
    frame.bind(value, std::move(tensor));
  return success();
}

LogicalResult Evaluator::step(Operation *op, Frame &frame) {
  if (auto call = dyn_cast<func::CallOp>(op))
    return step(call, frame);
  if (auto guard = dyn_cast<meta::UpdateGuardOp>(op)) {
    std::vector<Tensor> results = detail::evaluateUpdateGuard(guard, frame);
    for (auto [value, tensor] : llvm::zip_equal(op->getResults(), results))
      frame.bind(value, std::move(tensor));
    return success();
  }
  if (auto outer = dyn_cast<meta::OuterStepOp>(op)) {
    FailureOr<std::vector<Tensor>> results =
        detail::evaluateOuterStep(outer, frame);
    if (failed(results))
      return failure();
    for (auto [value, tensor] : llvm::zip_equal(op->getResults(), *results))
      frame.bind(value, std::move(tensor));
    return success();
  }
  // Every nn op has a statically shaped float tensor result: only its size
  // can be out of the interpreter's reach.
  auto evaluateNN = [&](auto nnOp) -> FailureOr<Tensor> {
    if (!isSupportedType(nnOp.getType())) {
      nnOp.emitError("result type ")
          << nnOp.getType() << " has more than " << kMaxElements
          << " elements, the interpreter's limit";
      return failure();
    }
    return detail::evaluateOp(nnOp, frame);
  };
  FailureOr<Tensor> result =
      llvm::TypeSwitch<Operation *, FailureOr<Tensor>>(op)
          .Case([&](arith::ConstantOp constant) {
            return detail::evaluateOp(constant, frame);
          })
          .Case<
              // Elementwise.
              nn::NegOp, nn::ExpOp, nn::LogOp, nn::SqrtOp, nn::RsqrtOp,
              nn::ErfOp, nn::ReluOp, nn::StepOp, nn::TanhOp, nn::SigmoidOp,
              nn::GeluOp, nn::ScaleOp, nn::ConvertOp, nn::StopGradientOp,
              nn::AddOp, nn::SubOp, nn::MulOp, nn::DivOp,
              // Linear, convolution, pooling.
              nn::LinearOp, nn::MatmulOp, nn::AttentionOp,
              nn::AttentionBackwardOp, nn::AttentionDoubleBackwardOp,
              nn::Conv2DOp, nn::Conv2DBackwardInputOp,
              nn::Conv2DBackwardWeightOp, nn::MaxPool2DOp, nn::AvgPool2DOp,
              nn::MaxPool2DBackwardOp, nn::MaxPool2DGatherOp,
              nn::AvgPool2DBackwardOp,
              // Normalization.
              nn::BatchNormOp, nn::LayerNormOp, nn::SoftmaxOp, nn::LogSoftmaxOp,
              // Shape.
              nn::ReshapeOp, nn::TransposeOp, nn::BroadcastOp, nn::ReduceSumOp,
              nn::ReduceMeanOp,
              // Losses and indexing.
              nn::MSELossOp, nn::CrossEntropyLossOp, nn::AccuracyOp,
              nn::OneHotOp, nn::MoeDispatchOp, nn::EmbeddingOp,
              nn::EmbeddingBackwardOp>(evaluateNN)
          .Default([](Operation *op) -> FailureOr<Tensor> {
            op->emitError("unsupported operation '")
                << op->getName()
                << "' (the interpreter evaluates nn ops, arith.constant, "
                   "meta.outer_step, func.call and func.return)";
            return failure();
          });
  if (failed(result))
    return failure();
  // Every kernel computes in doubles; a 16-bit result is stored rounded to
  // its type, as the runtime stores it (f32 results are kept as doubles).
  Type element = getElementTypeOrSelf(op->getResult(0).getType());
  if (!result->isInteger && (element.isBF16() || element.isF16()))
    detail::roundTo(*result, element);
  frame.bind(op->getResult(0), std::move(*result));
  return success();
}

/// Checks that `inputs` match the arguments of `func`, reporting at the
/// function's location.
static LogicalResult checkInputs(func::FuncOp func, ArrayRef<Tensor> inputs) {
  if (inputs.size() != func.getNumArguments())
    return func.emitError("expects ")
           << func.getNumArguments() << " inputs, got " << inputs.size();
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip_equal(func.getArgumentTypes(), inputs))) {
    auto [type, input] = pair;
    if (!isSupportedType(type))
      return func.emitError("argument #")
             << i << " has unsupported type " << type
             << " (expected a statically shaped tensor of floats or integers "
                "of at most "
             << kMaxElements << " elements)";
    auto tensorType = cast<RankedTensorType>(type);
    bool integer = isa<IntegerType>(tensorType.getElementType());
    size_t elements = input.isInteger ? input.ints.size() : input.values.size();
    if (ArrayRef<int64_t>(input.shape) != tensorType.getShape() ||
        input.isInteger != integer ||
        elements != static_cast<size_t>(tensorType.getNumElements()))
      return func.emitError("input #")
             << i << " (" << (input.isInteger ? "integer" : "float")
             << " tensor of shape [" << llvm::interleaved(input.shape)
             << "] with " << elements
             << " elements) does not match argument type " << type;
  }
  return success();
}

FailureOr<std::vector<Tensor>> evaluate(func::FuncOp func,
                                        ArrayRef<Tensor> inputs) {
  if (func.isExternal())
    return func.emitError("cannot evaluate external function @")
           << func.getSymName() << ": it has no body";
  if (!func.getBody().hasOneBlock())
    return func.emitError("cannot evaluate @")
           << func.getSymName()
           << ": only functions of a single block are supported";
  if (failed(checkInputs(func, inputs)))
    return failure();
  return Evaluator().call(func, inputs);
}

} // namespace metac::interp
