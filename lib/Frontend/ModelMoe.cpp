//===- ModelMoe.cpp - `moe(...)`: a mixture-of-experts layer -------------===//
//
// moe(x, experts = E, hidden = H, top_k = 1, capacity_factor = 1.0,
//     aux_loss = 0.0, name)
// on x [..., N, D] (N tokens of D features): a gate (a linear layer without
// bias) scores each token's experts, a softmax makes them probabilities,
// and nn.moe_dispatch routes each token to its top_k experts, C slots each
// (C = ceil(top_k N capacity_factor / E)); each expert is a two-layer
// feed-forward network D -> H -> D (ReLU), run on its slots; a token's
// output is the sum of its experts' outputs weighted by their
// probabilities (a dropped token's is zero: the residual around the layer
// carries it). Dispatch and combine are products with the mask, so the
// meta-gradient flows to every expert, the gate (through the weights) and
// the inputs, to any order; the routing decisions themselves are discrete.
// With aux_loss = a > 0 the layer adds Switch Transformer's load-balancing
// loss a E sum_e f_e P_e to the model's auxiliary loss (f_e: the fraction
// of the token choices expert e took, P_e: its mean probability; the
// gradient flows through P_e), which the task losses include.
//
//===----------------------------------------------------------------------===//

#include "ModelGenerator.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include <cmath>

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

Value ModelGenerator::genMoe(const CallExpr &call, Scope &scope) {
  Location l = loc(call.getLoc());
  if (!onlyKeywords(call, 1,
                    {"experts", "hidden", "top_k", "capacity_factor",
                     "aux_loss", "name"}))
    return nullptr;
  Value x = genTensor(*call.args[0], scope, "an argument");
  if (!x || !requireFloat(x, call) ||
      !requireRank(x, call, 2, "[tokens, features]"))
    return nullptr;
  for (StringRef required : {"experts", "hidden"})
    if (!keyword(call, required)) {
      diags.error(call.getLoc()) << "'moe' needs '" << required << " = ...'";
      return nullptr;
    }
  auto experts = intValue(*keyword(call, "experts"), "'experts'", 1);
  auto hidden = intValue(*keyword(call, "hidden"), "'hidden'", 1);
  std::optional<int64_t> topK = 1;
  if (const Expr *e = keyword(call, "top_k"))
    topK = intValue(*e, "'top_k'", 1);
  std::optional<double> factor = 1.0;
  if (const Expr *e = keyword(call, "capacity_factor"))
    factor = numberValue(*e, "'capacity_factor'");
  std::optional<double> auxWeight = 0.0;
  if (const Expr *e = keyword(call, "aux_loss"))
    auxWeight = numberValue(*e, "'aux_loss'");
  auto name = layerName(call, scope);
  if (!experts || !hidden || !topK || !factor || !auxWeight || !name)
    return nullptr;
  if (!(*auxWeight >= 0) || *auxWeight > 1e6) {
    diags.error(keyword(call, "aux_loss")->getLoc())
        << "'aux_loss' must be in [0, 1e6], got " << *auxWeight;
    return nullptr;
  }
  if (*topK > *experts) {
    diags.error(keyword(call, "top_k")->getLoc())
        << "'top_k' (" << *topK << ") is more than the experts (" << *experts
        << ")";
    return nullptr;
  }
  if (!(*factor > 0) || *factor > 1024) {
    diags.error(keyword(call, "capacity_factor")->getLoc())
        << "'capacity_factor' must be in (0, 1024], got " << *factor;
    return nullptr;
  }
  if (*experts > 4096 || *hidden > (int64_t(1) << 20)) {
    diags.error(call.getLoc()) << "'moe' is too large (at most 4096 experts "
                                  "and 2^20 hidden features)";
    return nullptr;
  }

  auto xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();
  int64_t rank = xs.size(), tokens = xs[rank - 2], features = xs[rank - 1];
  int64_t e = *experts, h = *hidden;
  int64_t capacity = std::max<int64_t>(
      1, static_cast<int64_t>(
             std::ceil(double(*topK) * double(tokens) * *factor / double(e))));
  SmallVector<int64_t> lead(xs.drop_back(2));
  auto typeOf = [&](ArrayRef<int64_t> tail) {
    SmallVector<int64_t> shape(lead);
    shape.append(tail.begin(), tail.end());
    return RankedTensorType::get(shape, element);
  };
  // Leading dimensions the per-expert weights are repeated over.
  auto overLead = [&](Value w) -> Value {
    if (lead.empty())
      return w;
    auto wt = cast<RankedTensorType>(w.getType());
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < static_cast<int64_t>(lead.size()); ++d)
      dims.push_back(d);
    return finish(nn::BroadcastOp::create(builder, l, typeOf(wt.getShape()), w,
                                          builder.getDenseI64ArrayAttr(dims)));
  };
  // Adds a per-expert bias [E, F] to [..., E, C, F].
  auto addBias = [&](Value v, Value bias) -> Value {
    auto vt = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < static_cast<int64_t>(lead.size()); ++d)
      dims.push_back(d);
    dims.push_back(vt.getRank() - 2); // the slots
    Value b = finish(nn::BroadcastOp::create(
        builder, l, vt, bias, builder.getDenseI64ArrayAttr(dims)));
    return b ? finish(nn::AddOp::create(builder, l, v, b)) : nullptr;
  };

  Value gate = createParam(*name, "gate.weight", {e, features}, element,
                           "uniform_fan_in", features, call.getLoc());
  Value w1 = createParam(*name, "experts.w1", {e, h, features}, element,
                         "uniform_fan_in", features, call.getLoc());
  Value b1 = createParam(*name, "experts.b1", {e, h}, element, "uniform_fan_in",
                         features, call.getLoc());
  Value w2 = createParam(*name, "experts.w2", {e, features, h}, element,
                         "uniform_fan_in", h, call.getLoc());
  Value b2 = createParam(*name, "experts.b2", {e, features}, element,
                         "uniform_fan_in", h, call.getLoc());
  if (!gate || !w1 || !b1 || !w2 || !b2)
    return nullptr;

  // Routing: probabilities [..., N, E] and the mask [..., N, E, C].
  Value logits = finish(
      nn::LinearOp::create(builder, l, typeOf({tokens, e}), x, gate, Value()));
  Value probs =
      logits ? finish(nn::SoftmaxOp::create(
                   builder, l, logits, builder.getI64IntegerAttr(rank - 1)))
             : nullptr;
  Value mask = probs ? finish(nn::MoeDispatchOp::create(
                           builder, l, typeOf({tokens, e, capacity}), probs,
                           builder.getI64IntegerAttr(*topK)))
                     : nullptr;
  if (!mask)
    return nullptr;
  if (*auxWeight > 0 && !addBalanceLoss(l, probs, mask, *topK, *auxWeight))
    return nullptr;
  // Dispatch: each slot's token, [..., E * C, D] = mask^T x.
  Value flatMask = finish(
      nn::ReshapeOp::create(builder, l, typeOf({tokens, e * capacity}), mask));
  auto dispatched = nn::MatmulOp::create(
      builder, l, typeOf({e * capacity, features}), flatMask, x);
  dispatched.setTransposeLhs(true);
  Value slots = finish(dispatched);
  Value inputs = slots
                     ? finish(nn::ReshapeOp::create(
                           builder, l, typeOf({e, capacity, features}), slots))
                     : nullptr;
  if (!inputs)
    return nullptr;
  // The experts: relu(in W1^T + b1) W2^T + b2 on each expert's slots.
  auto first = nn::MatmulOp::create(builder, l, typeOf({e, capacity, h}),
                                    inputs, overLead(w1));
  first.setTransposeRhs(true);
  Value hiddenValues = finish(first);
  hiddenValues = hiddenValues ? addBias(hiddenValues, b1) : nullptr;
  hiddenValues = hiddenValues
                     ? finish(nn::ReluOp::create(builder, l, hiddenValues))
                     : nullptr;
  if (!hiddenValues)
    return nullptr;
  auto second = nn::MatmulOp::create(
      builder, l, typeOf({e, capacity, features}), hiddenValues, overLead(w2));
  second.setTransposeRhs(true);
  Value outputs = finish(second);
  outputs = outputs ? addBias(outputs, b2) : nullptr;
  if (!outputs)
    return nullptr;
  // Combine: each token's slots weighted by its probabilities,
  // [..., N, D] = (mask * probs) [..., N, E * C] outputs [..., E * C, D].
  SmallVector<int64_t> capacityDim{static_cast<int64_t>(lead.size()) + 2};
  Value spread = finish(
      nn::BroadcastOp::create(builder, l, typeOf({tokens, e, capacity}), probs,
                              builder.getDenseI64ArrayAttr(capacityDim)));
  Value weights =
      spread ? finish(nn::MulOp::create(builder, l, mask, spread)) : nullptr;
  Value flatWeights =
      weights ? finish(nn::ReshapeOp::create(
                    builder, l, typeOf({tokens, e * capacity}), weights))
              : nullptr;
  Value flatOutputs = finish(nn::ReshapeOp::create(
      builder, l, typeOf({e * capacity, features}), outputs));
  if (!flatWeights || !flatOutputs)
    return nullptr;
  return finish(nn::MatmulOp::create(builder, l, xt, flatWeights, flatOutputs));
}

/// Switch Transformer's load-balancing loss of one MoE layer, weighted:
/// weight E sum_e f_e P_e over the tokens of a sequence.
bool ModelGenerator::addBalanceLoss(Location l, Value probs, Value mask,
                                    int64_t topK, double weight) {
  auto pt = cast<RankedTensorType>(probs.getType());
  int64_t rank = pt.getRank(), tokens = pt.getDimSize(rank - 2),
          experts = pt.getDimSize(rank - 1);
  Type element = pt.getElementType();
  SmallVector<int64_t> lead(pt.getShape().drop_back(2));
  auto typeOf = [&](ArrayRef<int64_t> tail) {
    SmallVector<int64_t> shape(lead);
    shape.append(tail.begin(), tail.end());
    return RankedTensorType::get(shape, element);
  };
  // f_e: the choices expert e took (a slot each) over all top_k N choices.
  Value taken = finish(
      nn::ReduceSumOp::create(builder, l, typeOf({experts}), mask,
                              builder.getDenseI64ArrayAttr({rank - 2, rank})));
  // P_e: the mean probability of expert e over the tokens.
  Value mass =
      finish(nn::ReduceSumOp::create(builder, l, typeOf({experts}), probs,
                                     builder.getDenseI64ArrayAttr({rank - 2})));
  Value product = taken && mass
                      ? finish(nn::MulOp::create(builder, l, taken, mass))
                      : nullptr;
  SmallVector<int64_t> expertDim{rank - 2};
  Value total = product ? finish(nn::ReduceSumOp::create(
                              builder, l, typeOf({}), product,
                              builder.getDenseI64ArrayAttr(expertDim)))
                        : nullptr;
  double scale = weight * double(experts) /
                 (double(topK) * double(tokens) * double(tokens));
  Value loss = total ? finish(nn::ScaleOp::create(
                           builder, l, total, builder.getF64FloatAttr(scale)))
                     : nullptr;
  if (!loss)
    return false;
  // Summed over leading dimensions: one loss per sample.
  if (!lead.empty()) {
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < static_cast<int64_t>(lead.size()); ++d)
      dims.push_back(d);
    loss = finish(
        nn::ReduceSumOp::create(builder, l, RankedTensorType::get({}, element),
                                loss, builder.getDenseI64ArrayAttr(dims)));
    if (!loss)
      return false;
  }
  auxLosses.push_back(loss);
  return true;
}
