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

#include <cmath>

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

namespace {

/// Bytes of a tensor value (0 for anything else).
double bytesOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return 0;
  return double(type.getNumElements()) *
         double(std::max<unsigned>(type.getElementTypeBitWidth(), 8) / 8);
}

/// The forward split where recomputation pays: one cut per inner step
/// (after its update), at the point between the step's gradient and the
/// next step's where the fewest forward bytes stay alive, then `segments`
/// - 1 of them evenly spread. Returns the segments as [begin, end) ranges
/// of `forward`.
SmallVector<std::pair<size_t, size_t>>
chooseSegments(ArrayRef<Operation *> forward, ArrayRef<StepBounds> steps,
               int64_t segments) {
  size_t n = forward.size();
  SmallVector<std::pair<size_t, size_t>> ranges;
  if (steps.empty() || segments == 1 || n < 2) {
    ranges.push_back({0, n});
    return ranges;
  }
  DenseMap<Operation *, size_t> index;
  for (auto [i, op] : llvm::enumerate(forward))
    index[op] = i;
  // live[p]: bytes defined at or before p and used by the forward after p.
  std::vector<double> live(n + 1, 0);
  for (auto [i, op] : llvm::enumerate(forward))
    for (Value r : op->getResults()) {
      size_t last = i;
      for (Operation *user : r.getUsers())
        if (auto it = index.find(user); it != index.end())
          last = std::max(last, it->second);
      live[i] += bytesOf(r);
      live[last] -= bytesOf(r);
    }
  for (size_t p = 1; p < n; ++p)
    live[p] += live[p - 1];
  // One candidate cut per step.
  SmallVector<size_t> candidates;
  for (auto [k, step] : llvm::enumerate(steps)) {
    size_t from = step.after ? index.lookup(step.after) : n;
    from = from == 0 ? 0 : from - 1;
    size_t to = n - 2;
    if (k + 1 < steps.size() && steps[k + 1].before)
      to = std::min(to, index.lookup(steps[k + 1].before));
    if (from > to)
      continue;
    size_t best = from;
    for (size_t p = from; p <= to; ++p)
      if (live[p] <= live[best])
        best = p;
    if (candidates.empty() || best > candidates.back())
      candidates.push_back(best);
  }
  int64_t count = int64_t(candidates.size());
  if (segments < 0) // about the square root of the steps
    segments = std::max<int64_t>(1, std::llround(std::sqrt(double(count + 1))));
  segments = std::min<int64_t>(segments, count + 1);
  size_t begin = 0;
  for (int64_t j = 1; j < segments; ++j) {
    // The steps are count + 1 pieces; segment j ends after piece
    // j (count + 1) / segments.
    size_t cut = candidates[j * (count + 1) / segments - 1];
    if (cut + 1 <= begin)
      continue;
    ranges.push_back({begin, cut + 1});
    begin = cut + 1;
  }
  ranges.push_back({begin, n});
  return ranges;
}

} // namespace

LogicalResult metac::meta::expandGrad(GradOp grad, ArrayRef<StepBounds> steps,
                                      int64_t rematSegments) {
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
  DenseMap<Operation *, Operation *> inlined;
  for (Operation &op : body.without_terminator()) {
    forward.push_back(builder.clone(op, mapping));
    inlined[&op] = forward.back();
  }
  auto yield = cast<YieldOp>(body.getTerminator());
  Value loss = mapping.lookupOrDefault(yield.getLoss());

  // Values that depend on the inputs: only they get cotangents.
  DenseSet<Value> active(inputs.begin(), inputs.end());
  for (Operation *op : forward)
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      active.insert(op->result_begin(), op->result_end());

  // The inner steps' bounds, as ops of the inlined forward.
  SmallVector<StepBounds> inlinedSteps;
  for (const StepBounds &step : steps)
    inlinedSteps.push_back(
        {inlined.lookup(step.before), inlined.lookup(step.after)});
  SmallVector<std::pair<size_t, size_t>> segments =
      chooseSegments(forward, inlinedSteps, rematSegments);

  // Reverse sweep, seeded with d loss / d loss = 1, segment by segment from
  // the last. Every segment but the last is first computed again from the
  // values that enter it, and its derivative rules read the copies: the
  // forward's own values die with the forward (rematerialisation). The
  // copies carry meta.recomputed, so that CSE does not merge them back.
  Adjoints adjoints(nn);
  if (active.contains(loss))
    adjoints.accumulate(loss,
                        nn.constant(cast<RankedTensorType>(loss.getType()), 1));
  StringAttr recomputedName = builder.getStringAttr("meta.recomputed");
  for (size_t s = segments.size(); s-- > 0;) {
    auto [begin, end] = segments[s];
    DenseMap<Operation *, Operation *> copies;
    if (s + 1 < segments.size()) {
      IRMapping recompute;
      for (size_t i = begin; i < end; ++i) {
        Operation *op = forward[i];
        if (!isPure(op))
          continue;
        Operation *copy = builder.clone(*op, recompute);
        copy->setAttr(recomputedName, builder.getUnitAttr());
        copies[op] = copy;
      }
    }
    for (size_t i = end; i-- > begin;) {
      Operation *op = forward[i];
      if (llvm::none_of(op->getResults(),
                        [&](Value r) { return adjoints.lookup(r); }))
        continue;
      Operation *rule = copies.lookup(op);
      if (!rule)
        rule = op;
      auto differentiable = dyn_cast<DifferentiableOpInterface>(rule);
      if (!differentiable)
        return op->emitOpError("cannot be differentiated: it has no "
                               "derivative rule (DifferentiableOpInterface)");
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
  using MetaAutodiffBase::MetaAutodiffBase;
  void runOnOperation() override {
    // Post-order puts every request after the requests nested in it.
    SmallVector<GradOp> requests;
    getOperation()->walk<WalkOrder::PostOrder>(
        [&](GradOp grad) { requests.push_back(grad); });
    // The inner steps of each outermost request, by the ops around them
    // (which outlive the inner requests' expansion).
    DenseMap<Operation *, SmallVector<StepBounds>> steps;
    if (remat != 0 && remat != 1)
      for (GradOp grad : requests) {
        if (grad->getParentOfType<GradOp>())
          continue;
        for (Operation &op : grad.getBody().front())
          if (isa<GradOp>(op))
            steps[grad].push_back({op.getPrevNode(), op.getNextNode()});
      }
    for (GradOp grad : requests) {
      auto it = steps.find(grad);
      ArrayRef<StepBounds> bounds;
      if (it != steps.end())
        bounds = it->second;
      if (failed(expandGrad(grad, bounds, remat)))
        return signalPassFailure();
    }
  }
};

} // namespace
