//===- OpCost.cpp - the work and traffic of each op
//------------------------===//

#include "metac/Planner/OpCost.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace metac;
using namespace metac::planner;

namespace {

double elements(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? double(type.getNumElements()) : 0;
}

double bytesOf(Value v) { return double(tensorBytes(v.getType())); }

/// The product of the last `count` dimensions of `v`'s type.
double trailing(Value v, unsigned count) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  double product = 1;
  for (int64_t d : shape.take_back(std::min<size_t>(count, shape.size())))
    product *= d;
  return product;
}

/// Bytes of every tensor operand and result: what a kernel streams.
double traffic(Operation *op) {
  double bytes = 0;
  for (Value v : op->getOperands())
    bytes += bytesOf(v);
  for (Value v : op->getResults())
    bytes += bytesOf(v);
  return bytes;
}

/// An attention derivative's pairs of query and key (halved when causal),
/// query width D and value width E. Ring attention's queries meet every
/// rank's keys (causal: half of them on average over the ring's ranks).
struct AttentionSizes {
  double pairs, width, values;
};
template <typename Op> AttentionSizes attentionSizes(Op o) {
  double width = trailing(o.getQuery(), 1), values = trailing(o.getValue(), 1);
  double keys =
      cast<RankedTensorType>(o.getKey().getType()).getShape().end()[-2] *
      double(ringRanksOf(o));
  double pairs = elements(o.getQuery()) / width * keys;
  return {o.getCausal() ? pairs / 2 : pairs, width, values};
}

OpCost perElement(Operation *op, double flopsPerElement, Value counted) {
  return {flopsPerElement * elements(counted), traffic(op), 0};
}

} // namespace

static OpCost computeCost(Operation *op);

int64_t metac::planner::ringRanksOf(Operation *op) {
  auto axes = op->getAttrOfType<DenseI16ArrayAttr>("ring_axes");
  auto module = op->getParentOfType<ModuleOp>();
  if (!axes || !module)
    return 1;
  for (auto grid : module.getOps<shard::GridOp>()) {
    int64_t ranks = 1;
    for (int16_t axis : axes.asArrayRef())
      if (axis < int64_t(grid.getShape().size()))
        ranks *= grid.getShape()[axis];
    return ranks;
  }
  return 1;
}

/// The share of a block that a rank sends or receives (the runtime counts
/// both) when a causal ring moves its operands into the zigzag layout, or
/// its results back (the runtime's Zigzag.h): chunk c of 2S moves from
/// block c / 2 to rank c or 2S - 1 - c unless those are one, and the ranks
/// share the moves. 0 where the runtime keeps the contiguous layout (an
/// odd block).
static double zigzagShare(int64_t ranks, bool causal, Value query) {
  if (!causal || ranks <= 1 ||
      cast<RankedTensorType>(query.getType()).getShape().end()[-2] % 2)
    return 0;
  int64_t moved = 0;
  for (int64_t c = 0; c < 2 * ranks; ++c)
    moved += c / 2 != (c < ranks ? c : 2 * ranks - 1 - c);
  return double(moved) / double(ranks);
}

/// The part of a ring call's exchange that blocks: the zigzag layout's
/// moves in and out, and the key-side cotangents' way home after ring size
/// hops (about the keys' and values' size).
static double ringMoveBytes(Operation *op, int64_t ranks) {
  if (auto o = dyn_cast<nn::AttentionOp>(op))
    return zigzagShare(ranks, o.getCausal(), o.getQuery()) *
           (bytesOf(o.getQuery()) + bytesOf(o.getKey()) +
            bytesOf(o.getValue()) + bytesOf(o.getResult()));
  if (auto o = dyn_cast<nn::AttentionBackwardOp>(op)) {
    if (o.getSiblings().front() != o)
      return 0;
    double blocks = bytesOf(o.getKey()) + bytesOf(o.getValue());
    // Zigzag: q, k, v and dy in, their three cotangents out.
    double operands = bytesOf(o.getQuery()) + blocks + bytesOf(o.getGrad());
    return double(ranks) * blocks +
           zigzagShare(ranks, o.getCausal(), o.getQuery()) *
               (2 * operands - bytesOf(o.getGrad()));
  }
  if (auto o = dyn_cast<nn::AttentionDoubleBackwardOp>(op)) {
    if (o.getSiblings().front() != o)
      return 0;
    double blocks = bytesOf(o.getKey()) + bytesOf(o.getValue());
    // Zigzag: q, k, v, dy and the given cotangent in, four cotangents out.
    double operands = bytesOf(o.getQuery()) + blocks + bytesOf(o.getGrad());
    return double(ranks) * blocks +
           zigzagShare(ranks, o.getCausal(), o.getQuery()) *
               (2 * operands + bytesOf(o.getCotangent()));
  }
  return 0;
}

double metac::planner::ringExchangeBytes(Operation *op) {
  int64_t ranks = ringRanksOf(op);
  if (ranks <= 1)
    return 0;
  return ringRotationBytes(op) + ringMoveBytes(op, ranks);
}

double metac::planner::ringRotationBytes(Operation *op) {
  int64_t ranks = ringRanksOf(op);
  if (ranks <= 1)
    return 0;
  double hops = double(ranks - 1);
  if (auto o = dyn_cast<nn::AttentionOp>(op))
    return hops * (bytesOf(o.getKey()) + bytesOf(o.getValue()));
  // Two passes over the blocks.
  if (auto o = dyn_cast<nn::AttentionBackwardOp>(op))
    return o.getSiblings().front() != o
               ? 0
               : 2 * hops * (bytesOf(o.getKey()) + bytesOf(o.getValue()));
  if (auto o = dyn_cast<nn::AttentionDoubleBackwardOp>(op)) {
    if (o.getSiblings().front() != o)
      return 0;
    double given = o.getFrom() == "key"     ? bytesOf(o.getKey())
                   : o.getFrom() == "value" ? bytesOf(o.getValue())
                                            : 0;
    return 2 * hops * (bytesOf(o.getKey()) + bytesOf(o.getValue()) + given);
  }
  return 0;
}

OpCost metac::planner::estimateOpCost(Operation *op) {
  OpCost cost = computeCost(op);
  cost.commBytes += ringExchangeBytes(op);
  return cost;
}

/// The op's own work and traffic (its collectives' payload as
/// communication).
static OpCost computeCost(Operation *op) {
  return llvm::TypeSwitch<Operation *, OpCost>(op)
      // Products: two operations per multiply-add, plus the bias.
      .Case([](nn::LinearOp o) {
        double out = elements(o.getResult());
        double in = trailing(o.getInput(), 1);
        return OpCost{2 * out * in + (o.getBias() ? out : 0), traffic(o), 0};
      })
      .Case([](nn::MatmulOp o) {
        auto lhs = cast<RankedTensorType>(o.getLhs().getType()).getShape();
        double k = o.getTransposeLhs() ? lhs.end()[-2] : lhs.back();
        return OpCost{2 * elements(o.getResult()) * k, traffic(o), 0};
      })
      .Case([](nn::AttentionOp o) {
        // Two products (scores, weighted values) and the softmax's
        // exponentials, sums and scaling; causal halves the pairs.
        auto q = cast<RankedTensorType>(o.getQuery().getType()).getShape();
        auto k = cast<RankedTensorType>(o.getKey().getType()).getShape();
        double pairs = elements(o.getResult()) /
                       o.getResult().getType().getShape().back() *
                       double(k.end()[-2]) * double(ringRanksOf(o));
        if (o.getCausal())
          pairs /= 2;
        double values = o.getResult().getType().getShape().back();
        return OpCost{pairs * (2 * q.back() + 2 * values + 4), traffic(o), 0};
      })
      .Case([](nn::AttentionBackwardOp o) {
        // The one call of an attention's three backward ops (query, key,
        // value) does, per pair of query and key, the statistics' and the
        // probabilities' products and exponentials (4 D + 5), shared by
        // the three; dP = dy v^T twice, D and dS (4 E + 5), shared by query
        // and key; and each one's own product (2 D or 2 E). Each op is
        // priced with its share, so that the three add up to the call;
        // operands are read once for the three.
        auto [pairs, width, values] = attentionSizes(o);
        double shared = (4 * width + 5) / 3;
        double own = o.getWrt() == "value" ? 2 * values
                                           : (4 * values + 5) / 2 + 2 * width;
        double reads = 0;
        for (Value v : o->getOperands())
          reads += bytesOf(v);
        return OpCost{pairs * (shared + own),
                      reads / 3 + bytesOf(o.getResult()), 0};
      })
      .Case([](nn::AttentionDoubleBackwardOp o) {
        // Per pair of query and key, the call for a value cotangent gv
        // makes the scores and dy gv^T twice (2 D + 2 E each) and q-bar,
        // k-bar and dy-bar (2 D, 2 D, 2 E) and about 10 exponentials,
        // sums and products: 8 D + 6 E + 10; for a query's or key's
        // cotangent, the scores, dP and dS-bar twice (2 D + 2 E + 2 D
        // each), q-bar and k-bar (one of them twice: 6 D), v-bar and
        // dy-bar (4 E) and about 20 more: 14 D + 8 E + 20. Shared by the
        // call's 3 (value) or 4 ops; operands read once for them.
        auto [pairs, width, values] = attentionSizes(o);
        bool value = o.getFrom() == "value";
        double ops = value ? 3 : 4;
        double perPair =
            value ? 8 * width + 6 * values + 10 : 14 * width + 8 * values + 20;
        double reads = 0;
        for (Value v : o->getOperands())
          reads += bytesOf(v);
        return OpCost{pairs * perPair / ops,
                      reads / ops + bytesOf(o.getResult()), 0};
      })
      .Case([](nn::Conv2DOp o) {
        double out = elements(o.getResult());
        return OpCost{2 * out * trailing(o.getWeight(), 3) +
                          (o.getBias() ? out : 0),
                      traffic(o), 0};
      })
      .Case([](nn::Conv2DBackwardInputOp o) {
        return OpCost{2 * elements(o.getGrad()) * trailing(o.getWeight(), 3),
                      traffic(o), 0};
      })
      .Case([](nn::Conv2DBackwardWeightOp o) {
        return OpCost{2 * elements(o.getGrad()) * trailing(o.getResult(), 3),
                      traffic(o), 0};
      })
      // Windows: one operation per element of each window.
      .Case<nn::MaxPool2DOp, nn::AvgPool2DOp>([](auto o) {
        ArrayRef<int64_t> k = o.getKernel();
        return perElement(o, double(k[0] * k[1]), o.getResult());
      })
      .Case<nn::MaxPool2DBackwardOp, nn::MaxPool2DGatherOp,
            nn::AvgPool2DBackwardOp>([](auto o) {
        ArrayRef<int64_t> k = o.getKernel();
        return perElement(o, double(k[0] * k[1]), o->getOperand(0));
      })
      // Elementwise maps, one operation per result element.
      .Case<nn::NegOp, nn::ExpOp, nn::LogOp, nn::SqrtOp, nn::RsqrtOp, nn::ErfOp,
            nn::ReluOp, nn::StepOp, nn::TanhOp, nn::SigmoidOp, nn::GeluOp,
            nn::ScaleOp, nn::AddOp, nn::SubOp, nn::MulOp, nn::DivOp>(
          [](Operation *o) { return perElement(o, 1, o->getResult(0)); })
      // Reductions, one per input element.
      .Case<nn::ReduceSumOp, nn::ReduceMeanOp>(
          [](Operation *o) { return perElement(o, 1, o->getOperand(0)); })
      .Case<nn::SoftmaxOp, nn::LogSoftmaxOp>(
          [](Operation *o) { return perElement(o, 5, o->getResult(0)); })
      .Case<nn::BatchNormOp, nn::LayerNormOp>(
          [](Operation *o) { return perElement(o, 8, o->getResult(0)); })
      .Case([](nn::MSELossOp o) { return perElement(o, 3, o.getPrediction()); })
      .Case([](nn::CrossEntropyLossOp o) {
        return perElement(o, 6, o.getLogits());
      })
      .Case([](nn::AccuracyOp o) { return perElement(o, 1, o.getLogits()); })
      // Each token ranks each expert against the others (E comparisons),
      // then writes its mask.
      .Case([](nn::MoeDispatchOp o) {
        int64_t experts =
            cast<RankedTensorType>(o.getProbs().getType()).getShape().back();
        return perElement(o, 2 * experts, o.getProbs());
      })
      .Case([](nn::EmbeddingBackwardOp o) {
        return perElement(o, 1, o.getGrad());
      })
      // Copies: traffic, no arithmetic (a shard.all_slice keeps this rank's
      // slice of a replicated value: a local copy).
      .Case<nn::TransposeOp, nn::BroadcastOp, nn::EmbeddingOp, nn::OneHotOp,
            nn::ConvertOp, tensor::ConcatOp, shard::AllSliceOp>(
          [](Operation *o) {
            return OpCost{0, traffic(o), 0};
          })
      // Views and constants.
      .Case<nn::ReshapeOp, nn::StopGradientOp, tensor::ExtractSliceOp,
            tensor::EmptyOp>([](Operation *) { return OpCost{}; })
      // The outer update: the guard squares and sums every gradient; Adam
      // does about 12 operations per element over parameter, gradient and
      // two moments (7 tensors streamed), SGD 2 to 5.
      .Case([](meta::UpdateGuardOp o) {
        double n = 0;
        for (Value g : o.getGrads())
          n += elements(g);
        return OpCost{2 * n, traffic(o), 0};
      })
      .Case([](meta::OuterStepOp o) {
        double n = 0, bytes = 0;
        for (Value p : o.getParams()) {
          n += elements(p);
          bytes += bytesOf(p);
        }
        bool adam = !isa<meta::SGDAttr>(o.getOptimizer());
        return OpCost{(adam ? 12 : 5) * n, (adam ? 7 : 5) * bytes, 0};
      })
      // Communication: the payload of each collective or transfer.
      .Case<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp,
            shard::AllToAllOp, shard::BroadcastOp, shard::SendOp>(
          [](Operation *o) {
            return OpCost{0, 0, bytesOf(o->getOperand(0))};
          })
      // A receive's payload is its result (its operand only gives the
      // shape).
      .Case([](shard::RecvOp o) {
        return OpCost{0, 0, bytesOf(o.getResult())};
      })
      .Default([](Operation *) { return OpCost{}; });
}

OpCost metac::planner::estimateFunctionCost(func::FuncOp function) {
  OpCost total;
  function.walk([&](Operation *op) { total += estimateOpCost(op); });
  return total;
}

uint64_t metac::planner::tensorBytes(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return 0;
  return uint64_t(t.getNumElements()) *
         std::max<unsigned>(t.getElementTypeBitWidth() / 8, 1);
}
