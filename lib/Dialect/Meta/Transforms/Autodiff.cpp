//===- Autodiff.cpp - reverse-mode expansion of meta.grad -----------------===//
//
// Each meta.grad becomes its body, inlined at the op (the forward pass),
// followed by the reverse sweep built from the ops' DifferentiableOpInterface
// rules. Requests are expanded innermost first, so an enclosing request
// differentiates the reverse sweep of an inner one: second order is exact.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/Meta/Transforms/Passes.h"

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Interfaces/DifferentiableOpInterface.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

namespace metac::meta {
#define GEN_PASS_DEF_METAAUTODIFF
#include "metac/Dialect/Meta/Transforms/Passes.h.inc"
} // namespace metac::meta

using namespace mlir;
using namespace metac;
using namespace metac::meta;

namespace {

/// Cotangents of the active values of one reverse sweep.
class Adjoints {
public:
  explicit Adjoints(nn::NNBuilder &nn) : nn(nn) {}

  Value lookup(Value v) const { return adjoints.lookup(v); }

  /// Adds `cotangent` into the adjoint of `v`.
  void accumulate(Value v, Value cotangent) {
    Value &slot = adjoints[v];
    slot = slot ? nn.add(slot, cotangent) : cotangent;
  }

  /// The adjoint of `v`, zeros when nothing flowed into it.
  Value getOrZeros(Value v) {
    Value adjoint = adjoints.lookup(v);
    return adjoint ? adjoint : nn.zerosLike(v);
  }

private:
  nn::NNBuilder &nn;
  DenseMap<Value, Value> adjoints;
};

} // namespace

LogicalResult metac::meta::expandGrad(GradOp grad) {
  OpBuilder builder(grad);
  nn::NNBuilder nn(builder, grad.getLoc());
  Block &body = grad.getBody().front();

  // Forward: the body inlined at the op. An outer value passed as two inputs
  // gets a distinct copy per extra use, so each input has its own adjoint.
  IRMapping mapping;
  SmallVector<Value> inputs;
  DenseSet<Value> seen;
  for (auto [arg, input] : llvm::zip(body.getArguments(), grad.getInputs())) {
    Value v = input;
    if (!seen.insert(input).second)
      v = nn::ReshapeOp::create(builder, grad.getLoc(), input.getType(), input);
    mapping.map(arg, v);
    inputs.push_back(v);
  }
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(builder.clone(op, mapping));
  auto yield = cast<YieldOp>(body.getTerminator());
  Value loss = mapping.lookupOrDefault(yield.getLoss());

  // Values that depend on the inputs: only they get cotangents.
  DenseSet<Value> active(inputs.begin(), inputs.end());
  for (Operation *op : forward)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op->result_begin(), op->result_end());

  // Reverse sweep, seeded with d loss / d loss = 1.
  Adjoints adjoints(nn);
  if (active.contains(loss))
    adjoints.accumulate(loss,
                        nn.constant(cast<RankedTensorType>(loss.getType()), 1));
  for (Operation *op : llvm::reverse(forward)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return adjoints.lookup(r); }))
      continue;
    auto differentiable = dyn_cast<DifferentiableOpInterface>(op);
    if (!differentiable)
      return op->emitOpError("cannot be differentiated: it has no derivative "
                             "rule (DifferentiableOpInterface)");
    SmallVector<Value> resultCotangents;
    for (Value r : op->getResults())
      resultCotangents.push_back(adjoints.getOrZeros(r));
    SmallVector<Value> operandCotangents;
    if (failed(differentiable.buildVJP(builder, resultCotangents,
                                       operandCotangents)))
      return failure();
    if (operandCotangents.size() != op->getNumOperands())
      return op->emitOpError("derivative rule returned ")
             << operandCotangents.size() << " cotangents for "
             << op->getNumOperands() << " operands";
    for (auto [operand, cotangent] :
         llvm::zip(op->getOperands(), operandCotangents))
      if (cotangent && active.contains(operand))
        adjoints.accumulate(operand, cotangent);
  }

  SmallVector<Value> gradients;
  for (Value input : inputs) {
    Value g = adjoints.getOrZeros(input);
    if (grad.getFirstOrder())
      g = nn::StopGradientOp::create(builder, grad.getLoc(), g);
    gradients.push_back(g);
  }
  grad.getValue().replaceAllUsesWith(loss);
  for (auto [result, g] : llvm::zip(grad.getGradients(), gradients))
    result.replaceAllUsesWith(g);
  grad.erase();
  return success();
}

namespace {

struct MetaAutodiffPass
    : public metac::meta::impl::MetaAutodiffBase<MetaAutodiffPass> {
  void runOnOperation() override {
    // Post-order puts every request after the requests nested in it.
    SmallVector<GradOp> requests;
    getOperation()->walk<WalkOrder::PostOrder>(
        [&](GradOp grad) { requests.push_back(grad); });
    for (GradOp grad : requests)
      if (failed(expandGrad(grad)))
        return signalPassFailure();
  }
};

} // namespace
