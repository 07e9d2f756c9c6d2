//===- Expand.cpp - meta.train to its meta-iteration step function --------===//

#include "metac/Dialect/Meta/Transforms/Passes.h"
#include "metac/Dialect/Meta/Transforms/TaskAssignment.h"

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Dialect/NN/Transforms/Batching.h"

#include "mlir/IR/IRMapping.h"

#include <functional>

namespace metac::meta {
#define GEN_PASS_DEF_METAEXPAND
#include "metac/Dialect/Meta/Transforms/Passes.h.inc"
} // namespace metac::meta

using namespace mlir;
using namespace metac;
using namespace metac::meta;

namespace {

RankedTensorType stacked(ArrayRef<int64_t> leading, Type sample) {
  auto t = cast<RankedTensorType>(sample);
  SmallVector<int64_t> shape(leading);
  llvm::append_range(shape, t.getShape());
  return RankedTensorType::get(shape, t.getElementType());
}

/// One task's slice of a task-batched type.
RankedTensorType taskSlice(Type batched) {
  auto t = cast<RankedTensorType>(batched);
  return RankedTensorType::get(t.getShape().drop_front(), t.getElementType());
}

/// The body of a meta.map over one task batch: one task's support inputs,
/// support targets, query inputs and query targets (slices of
/// `batchTypes`), then the parameters; the builder is left inside it.
Block *createTaskBody(OpBuilder &b, MapOp map, ArrayRef<Type> batchTypes,
                      ArrayRef<Type> paramTypes, Location loc) {
  Block *body = b.createBlock(&map.getBody());
  for (Type t : batchTypes)
    body->addArgument(taskSlice(t), loc);
  for (Type t : paramTypes)
    body->addArgument(t, loc);
  return body;
}

/// Emits the per-sample `model` on a set of samples `inputs` ([N, sample...])
/// with `params`, vectorised over the samples; returns [N, output...]. A
/// model with an auxiliary loss (a second result, `meta.aux_loss`: MoE
/// layers' load balancing) gives its mean over the samples in `aux`.
FailureOr<Value> applyModel(OpBuilder &b, func::FuncOp model, ValueRange params,
                            Value inputs, Value *aux = nullptr) {
  Block &body = model.getBody().front();
  int64_t samples = cast<RankedTensorType>(inputs.getType()).getDimSize(0);
  DenseMap<Value, nn::BatchedValue> values;
  for (auto [arg, p] : llvm::zip(body.getArguments().drop_back(), params))
    values[arg] = {p, false};
  values[body.getArguments().back()] = {inputs, true};
  for (Operation &op : body.without_terminator()) {
    SmallVector<nn::BatchedValue> operands;
    for (Value v : op.getOperands()) {
      auto it = values.find(v);
      if (it == values.end())
        return op.emitOpError("uses a value from outside the model");
      operands.push_back(it->second);
    }
    FailureOr<nn::BatchedValue> result =
        nn::batchOp(b, &op, operands, samples, nn::BatchAxis::Samples);
    if (failed(result))
      return failure();
    values[op.getResult(0)] = *result;
  }
  Operation *terminator = body.getTerminator();
  if (aux && terminator->getNumOperands() > 1) {
    FailureOr<Value> perSample = nn::ensureBatched(
        b, model.getLoc(), values.lookup(terminator->getOperand(1)), samples);
    if (failed(perSample))
      return failure();
    *aux = nn::NNBuilder(b, model.getLoc()).reduceMean(*perSample, {0});
  }
  Value output = terminator->getOperand(0);
  return nn::ensureBatched(b, model.getLoc(), values.lookup(output), samples);
}

/// The task loss of predictions on a set of samples (PyTorch's means),
/// plus the model's auxiliary loss when it has one (`aux`).
Value emitLoss(OpBuilder &b, Location loc, LossKind kind, Value prediction,
               Value target, Value aux = Value()) {
  Type element = cast<RankedTensorType>(prediction.getType()).getElementType();
  auto scalar = RankedTensorType::get({}, element);
  Value loss =
      kind == LossKind::MSE
          ? nn::MSELossOp::create(b, loc, scalar, prediction, target)
                .getResult()
          : nn::CrossEntropyLossOp::create(b, loc, scalar, prediction, target)
                .getResult();
  return aux ? nn::NNBuilder(b, loc).add(loss, aux) : loss;
}

class StepBuilder {
public:
  StepBuilder(TrainOp train, func::FuncOp model, TasksOp tasks)
      : train(train), model(model), tasks(tasks) {}

  /// `@<name>.step` over the task distribution's batch.
  FailureOr<func::FuncOp> build(OpBuilder &b);
  /// A step named `name` over several batches of tasks (a mixed
  /// meta-batch, `meta.task_mix`): its meta-loss is the sum of their query
  /// losses over the meta-batch's `meta_batch` tasks.
  FailureOr<func::FuncOp> buildMixed(OpBuilder &b, StringRef name,
                                     ArrayRef<BatchPart> parts);

  /// `@<name>.eval<steps>(params..., task batch) -> per-task query losses`:
  /// adaptation by `steps` first-order inner steps (none for 0) on each
  /// task of a batch drawn from `evalTasks`, scored on its query set.
  FailureOr<func::FuncOp> buildEvaluation(OpBuilder &b, TasksOp evalTasks,
                                          int64_t steps);

private:
  /// The per-task query prediction after `steps` inner SGD steps of
  /// `order`, inside a meta.map body.
  FailureOr<Value> emitQueryPrediction(OpBuilder &b, int64_t steps,
                                       double innerLr, int64_t order,
                                       ValueRange params, ValueRange task);
  /// The task loss of a query prediction (ProtoNets: of its logits).
  Value emitQueryLoss(OpBuilder &b, Value prediction, ValueRange task);
  /// The parameters after `steps` inner SGD steps on the task's support
  /// set (a meta.adapt; the parameters themselves for 0).
  FailureOr<SmallVector<Value>> emitAdapted(OpBuilder &b, int64_t steps,
                                            double innerLr, int64_t order,
                                            ValueRange params, ValueRange task);
  FailureOr<func::FuncOp> buildReptile(OpBuilder &b, ReptileAttr reptile,
                                       func::FuncOp step, ValueRange params,
                                       ValueRange state, ValueRange batch,
                                       ArrayRef<Type> batchTypes,
                                       ArrayRef<Type> paramTypes, Type scalar,
                                       int64_t count);
  /// Whether the step checks (and clips) its update: unless the program
  /// ignores non-finite values (and then it does not clip).
  bool guarded() { return train.getOnNonfinite().value_or("stop") != "ignore"; }
  /// The outer update of `grads`, behind a meta.update_guard when
  /// `guarded()`, and the step's return: new parameters and state, the
  /// meta-loss, then the guard's gradient norms.
  void emitUpdateAndReturn(OpBuilder &b, ValueRange params, ValueRange grads,
                           ValueRange state, Value loss);
  /// iMAML: the query loss and the implicit meta-gradient of one task.
  FailureOr<SmallVector<Value>> emitImplicitGradient(OpBuilder &b,
                                                     IMAMLAttr imaml,
                                                     ValueRange theta,
                                                     ValueRange task);

  /// The auxiliary loss of each query prediction (MoE load balancing),
  /// and whether the query loss includes it (not in evaluations: they
  /// report the task's loss).
  DenseMap<Value, Value> auxOf;
  bool withAux = true;

  /// ANIL: which parameters the inner loop adapts (those under `head`).
  LogicalResult selectHead(StringRef head);
  /// The types of everything the outer loop learns: the model's parameters
  /// and, for Meta-SGD, a rate per parameter.
  SmallVector<Type> learnedTypes();
  /// Meta-SGD: names the step's learned arguments (the model's parameters,
  /// then `lr.<name>` rates starting at `innerLr`) for the runtime.
  void nameLearnedParameters(func::FuncOp step, double innerLr);
  FailureOr<Value> emitMetaSGDPrediction(OpBuilder &b, int64_t steps,
                                         int64_t order, ValueRange theta,
                                         ValueRange alpha, ValueRange task);
  /// ProtoNets: the query logits against class prototypes of the support
  /// set.
  FailureOr<Value> emitPrototypeLogits(OpBuilder &b, ValueRange params,
                                       ValueRange task, int64_t ways);

  TrainOp train;
  func::FuncOp model;
  TasksOp tasks;
  /// Per parameter, whether the inner loop adapts it (empty: all).
  SmallVector<bool> adaptedParams;
};

FailureOr<Value> StepBuilder::emitQueryPrediction(OpBuilder &b, int64_t steps,
                                                  double innerLr, int64_t order,
                                                  ValueRange params,
                                                  ValueRange task) {
  Value aux;
  FailureOr<Value> prediction;
  if (steps == 0) {
    prediction = applyModel(b, model, params, task[2], &aux);
  } else {
    FailureOr<SmallVector<Value>> adapted =
        emitAdapted(b, steps, innerLr, order, params, task);
    if (failed(adapted))
      return failure();
    prediction = applyModel(b, model, *adapted, task[2], &aux);
  }
  if (succeeded(prediction) && aux)
    auxOf[*prediction] = aux;
  return prediction;
}

Value StepBuilder::emitQueryLoss(OpBuilder &b, Value prediction,
                                 ValueRange task) {
  LossKind kind = isa<ProtoNetAttr>(train.getAlgorithm())
                      ? LossKind::CrossEntropy
                      : train.getLoss();
  return emitLoss(b, train.getLoc(), kind, prediction, task[3],
                  withAux ? auxOf.lookup(prediction) : Value());
}

FailureOr<SmallVector<Value>>
StepBuilder::emitAdapted(OpBuilder &b, int64_t steps, double innerLr,
                         int64_t order, ValueRange params, ValueRange task) {
  Location loc = train.getLoc();
  if (steps == 0)
    return SmallVector<Value>(params);
  // ANIL adapts only the head; the body enters the inner loop as a value
  // captured from outside (a constant of the inner gradients, still
  // differentiable for the meta-gradient).
  SmallVector<Value> adapted;
  for (auto [i, p] : llvm::enumerate(params))
    if (adaptedParams.empty() || adaptedParams[i])
      adapted.push_back(p);
  SmallVector<Type> adaptedTypes(ValueRange(adapted).getTypes());
  auto adapt =
      AdaptOp::create(b, loc, adaptedTypes, adapted, b.getI64IntegerAttr(steps),
                      b.getF64FloatAttr(innerLr), b.getI64IntegerAttr(order));
  auto merge = [&](ValueRange fresh) {
    SmallVector<Value> all;
    size_t next = 0;
    for (auto [i, p] : llvm::enumerate(params))
      all.push_back(adaptedParams.empty() || adaptedParams[i] ? fresh[next++]
                                                              : p);
    return all;
  };
  {
    OpBuilder::InsertionGuard guard(b);
    Block *block = b.createBlock(&adapt.getBody());
    for (Type t : adaptedTypes)
      block->addArgument(t, loc);
    Value aux;
    FailureOr<Value> prediction =
        applyModel(b, model, merge(block->getArguments()), task[0], &aux);
    if (failed(prediction))
      return failure();
    YieldOp::create(
        b, loc, emitLoss(b, loc, train.getLoss(), *prediction, task[1], aux));
  }
  return merge(adapt.getResults());
}

/// Prototypical Networks (Snell et al., 2017): the model embeds samples;
/// each class's prototype is the mean embedding of its support samples
/// (one-hot labels times embeddings, over the class counts); a query's
/// logits are minus its squared Euclidean distances to the prototypes,
/// -(||q||^2 - 2 q.p + ||p||^2); the loss is their cross-entropy.
FailureOr<Value> StepBuilder::emitPrototypeLogits(OpBuilder &b,
                                                  ValueRange params,
                                                  ValueRange task,
                                                  int64_t ways) {
  Location loc = train.getLoc();
  nn::NNBuilder nn(b, loc);
  FailureOr<Value> support = applyModel(b, model, params, task[0]);
  FailureOr<Value> query = applyModel(b, model, params, task[2]);
  if (failed(support) || failed(query))
    return failure();
  auto embedded = cast<RankedTensorType>(support->getType());
  if (embedded.getRank() != 2)
    return train.emitOpError("protonet needs a model that embeds a sample "
                             "as a vector, got ")
           << embedded.getShape().drop_front() << " per sample";
  Type element = embedded.getElementType();
  int64_t shots = embedded.getDimSize(0), width = embedded.getDimSize(1);
  int64_t queries = cast<RankedTensorType>(query->getType()).getDimSize(0);
  Value hot = nn::OneHotOp::create(
      b, loc, RankedTensorType::get({shots, ways}, element), task[1]);
  Value sums = nn.matmul(hot, *support, /*transposeA=*/true);
  Value counts = nn.reduceSum(hot, {0});
  Value prototypes = nn.div(sums, nn.broadcast(counts, {ways, width}, {1}));
  Value cross = nn.matmul(*query, prototypes, false, /*transposeB=*/true);
  Value queryNorms = nn.reduceSum(nn.mul(*query, *query), {1});
  Value prototypeNorms = nn.reduceSum(nn.mul(prototypes, prototypes), {1});
  return nn.sub(nn.sub(nn.scale(cross, 2.0),
                       nn.broadcast(queryNorms, {queries, ways}, {1})),
                nn.broadcast(prototypeNorms, {queries, ways}, {0}));
}

SmallVector<Type> StepBuilder::learnedTypes() {
  SmallVector<Type> types(model.getFunctionType().getInputs().drop_back());
  if (isa<MetaSGDAttr>(train.getAlgorithm())) {
    // Meta-SGD also learns one inner learning rate per parameter element.
    size_t n = types.size();
    for (size_t i = 0; i < n; ++i)
      types.push_back(types[i]);
  }
  return types;
}

void StepBuilder::nameLearnedParameters(func::FuncOp step, double innerLr) {
  unsigned n = model.getNumArguments() - 1;
  MLIRContext *ctx = step.getContext();
  for (unsigned i = 0; i < n; ++i) {
    step.setArgAttrs(i, model.getArgAttrDict(i));
    auto name = model.getArgAttrOfType<StringAttr>(i, "meta.param");
    NamedAttrList rate;
    rate.set("meta.param", StringAttr::get(ctx, "lr." + name.getValue()));
    rate.set("meta.init", StringAttr::get(ctx, "constant"));
    rate.set("meta.init_value", FloatAttr::get(Float64Type::get(ctx), innerLr));
    step.setArgAttrs(n + i, rate.getDictionary(ctx));
  }
}

/// Meta-SGD (Li et al., 2017): inner steps theta - alpha * grad with a
/// learned rate per parameter element (alpha, learned by the outer loop
/// like the parameters), then the query loss.
FailureOr<Value> StepBuilder::emitMetaSGDPrediction(OpBuilder &b, int64_t steps,
                                                    int64_t order,
                                                    ValueRange theta,
                                                    ValueRange alpha,
                                                    ValueRange task) {
  Location loc = train.getLoc();
  nn::NNBuilder nn(b, loc);
  SmallVector<Value> fast(theta);
  Type lossType;
  for (int64_t k = 0; k < steps; ++k) {
    if (!lossType) {
      auto type = cast<RankedTensorType>(fast[0].getType());
      lossType = RankedTensorType::get({}, type.getElementType());
    }
    SmallVector<Type> types{lossType};
    llvm::append_range(types, ValueRange(fast).getTypes());
    auto grad = GradOp::create(b, loc, types, fast, /*first_order=*/order == 1);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *body = b.createBlock(&grad.getBody());
      for (Value v : fast)
        body->addArgument(v.getType(), loc);
      Value aux;
      FailureOr<Value> prediction =
          applyModel(b, model, body->getArguments(), task[0], &aux);
      if (failed(prediction))
        return failure();
      YieldOp::create(
          b, loc, emitLoss(b, loc, train.getLoss(), *prediction, task[1], aux));
    }
    for (auto [p, g, a] : llvm::zip(fast, grad.getGradients(), alpha))
      p = nn.sub(p, nn.mul(a, g));
  }
  Value aux;
  FailureOr<Value> prediction = applyModel(b, model, fast, task[2], &aux);
  if (succeeded(prediction) && aux)
    auxOf[*prediction] = aux;
  return prediction;
}

/// iMAML (Rajeswaran et al., 2019), per task: phi after `steps` gradient
/// steps on the proximal support loss L_s(phi) + lambda/2 |phi - theta|^2
/// from theta (first-order: nothing differentiates through them); then the
/// implicit meta-gradient x solving (I + H/lambda) x = grad L_q(phi), H the
/// Hessian of L_s at phi, by `cg_steps` conjugate-gradient iterations whose
/// Hessian-vector products are gradients of <grad L_s, p> (a gradient
/// request inside another). No intermediate of the inner steps is kept for
/// a backward pass, so memory does not grow with them. Yields the query
/// loss at phi and x.
FailureOr<SmallVector<Value>>
StepBuilder::emitImplicitGradient(OpBuilder &b, IMAMLAttr imaml,
                                  ValueRange theta, ValueRange task) {
  Location loc = train.getLoc();
  nn::NNBuilder nn(b, loc);
  double lr = imaml.getInnerLr().convertToDouble();
  double lambda = imaml.getLambda().convertToDouble();
  auto scalarOf = [](Value v) {
    return RankedTensorType::get(
        {}, cast<RankedTensorType>(v.getType()).getElementType());
  };
  auto allDims = [](Value v) {
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < cast<RankedTensorType>(v.getType()).getRank(); ++d)
      dims.push_back(d);
    return dims;
  };
  // The gradient of `loss` with respect to `at`, as a gradient request.
  std::function<FailureOr<SmallVector<Value>>(
      ValueRange, bool, function_ref<FailureOr<Value>(ValueRange)>)>
      gradient = [&](ValueRange at, bool firstOrder,
                     function_ref<FailureOr<Value>(ValueRange)> loss)
      -> FailureOr<SmallVector<Value>> {
    SmallVector<Type> types{scalarOf(at[0])};
    llvm::append_range(types, at.getTypes());
    auto grad = GradOp::create(b, loc, types, at, firstOrder);
    {
      OpBuilder::InsertionGuard guard(b);
      Block *body = b.createBlock(&grad.getBody());
      for (Value v : at)
        body->addArgument(v.getType(), loc);
      FailureOr<Value> value = loss(body->getArguments());
      if (failed(value))
        return failure();
      YieldOp::create(b, loc, *value);
    }
    return SmallVector<Value>(grad.getGradients());
  };
  auto lossOn = [&](ValueRange p, Value x, Value y) -> FailureOr<Value> {
    Value aux;
    FailureOr<Value> prediction = applyModel(b, model, p, x, &aux);
    if (failed(prediction))
      return failure();
    return emitLoss(b, loc, train.getLoss(), *prediction, y, aux);
  };
  auto supportLoss = [&](ValueRange p) { return lossOn(p, task[0], task[1]); };
  auto queryLoss = [&](ValueRange p) { return lossOn(p, task[2], task[3]); };
  auto dot = [&](ValueRange a, ValueRange c) {
    Value total;
    for (auto [x, y] : llvm::zip(a, c)) {
      Value term = nn.reduceSum(nn.mul(x, y), allDims(x));
      total = total ? nn.add(total, term) : term;
    }
    return total;
  };
  auto times = [&](Value scalar, Value t) {
    auto type = cast<RankedTensorType>(t.getType());
    return nn.mul(nn.broadcast(scalar, type.getShape(), allDims(t)), t);
  };

  // The proximal inner loop.
  SmallVector<Value> phi(theta);
  for (int64_t k = 0; k < imaml.getSteps(); ++k) {
    FailureOr<SmallVector<Value>> g = gradient(phi, true, supportLoss);
    if (failed(g))
      return failure();
    for (auto [p, gi, t] : llvm::zip(phi, *g, theta))
      p = nn.sub(p, nn.scale(nn.add(gi, nn.scale(nn.sub(p, t), lambda)), lr));
  }
  for (Value &p : phi)
    p = nn::StopGradientOp::create(b, loc, p);
  FailureOr<SmallVector<Value>> v = gradient(phi, true, queryLoss);
  FailureOr<Value> lossAtPhi = queryLoss(phi);
  if (failed(v) || failed(lossAtPhi))
    return failure();
  // A p = p + H p / lambda, H p the gradient of <grad L_s(phi), p>.
  auto apply = [&](ArrayRef<Value> p) -> FailureOr<SmallVector<Value>> {
    FailureOr<SmallVector<Value>> hp =
        gradient(phi, true, [&](ValueRange at) -> FailureOr<Value> {
          FailureOr<SmallVector<Value>> g = gradient(at, false, supportLoss);
          if (failed(g))
            return failure();
          return dot(*g, p);
        });
    if (failed(hp))
      return failure();
    SmallVector<Value> result;
    for (auto [pi, hpi] : llvm::zip(p, *hp))
      result.push_back(nn.add(pi, nn.scale(hpi, 1.0 / lambda)));
    return result;
  };
  // Conjugate gradients from x = 0.
  SmallVector<Value> x, r(*v), p(*v);
  for (Value vi : *v)
    x.push_back(nn.zerosLike(vi));
  Value rr = dot(r, r);
  for (int64_t k = 0; k < imaml.getCgSteps(); ++k) {
    FailureOr<SmallVector<Value>> ap = apply(p);
    if (failed(ap))
      return failure();
    Value alpha = nn.div(rr, dot(p, *ap));
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = nn.add(x[i], times(alpha, p[i]));
      r[i] = nn.sub(r[i], times(alpha, (*ap)[i]));
    }
    Value rrNew = dot(r, r);
    Value beta = nn.div(rrNew, rr);
    for (size_t i = 0; i < p.size(); ++i)
      p[i] = nn.add(r[i], times(beta, p[i]));
    rr = rrNew;
  }
  SmallVector<Value> result{*lossAtPhi};
  llvm::append_range(result, x);
  return result;
}

LogicalResult StepBuilder::selectHead(StringRef head) {
  adaptedParams.clear();
  bool any = false;
  for (unsigned i = 0, e = model.getNumArguments() - 1; i < e; ++i) {
    auto name = model.getArgAttrOfType<StringAttr>(i, "meta.param");
    bool inHead = name && (name.getValue() == head ||
                           name.getValue().starts_with((head + ".").str()));
    adaptedParams.push_back(inHead);
    any |= inHead;
  }
  if (!any)
    return train.emitOpError("anil head '")
           << head << "' names no parameter of model '" << model.getSymName()
           << "'";
  return success();
}

FailureOr<func::FuncOp> StepBuilder::build(OpBuilder &b) {
  return buildMixed(b, (train.getSymName() + ".step").str(),
                    {BatchPart{static_cast<int64_t>(train.getMetaBatch()),
                               static_cast<int64_t>(tasks.getSupport()),
                               static_cast<int64_t>(tasks.getQuery()), -1}});
}

FailureOr<func::FuncOp> StepBuilder::buildMixed(OpBuilder &b, StringRef name,
                                                ArrayRef<BatchPart> parts) {
  // A part with steps >= 0 is one class of a mixed meta-batch.
  bool mixed = parts.size() > 1 || parts.front().steps >= 0;
  auto maml = dyn_cast<MAMLAttr>(train.getAlgorithm());
  auto reptile = dyn_cast<ReptileAttr>(train.getAlgorithm());
  auto anil = dyn_cast<ANILAttr>(train.getAlgorithm());
  auto protonet = dyn_cast<ProtoNetAttr>(train.getAlgorithm());
  auto metasgd = dyn_cast<MetaSGDAttr>(train.getAlgorithm());
  auto imaml = dyn_cast<IMAMLAttr>(train.getAlgorithm());
  if (!maml && !reptile && !anil && !protonet && !metasgd && !imaml)
    return train.emitOpError("algorithm ")
           << train.getAlgorithm()
           << " is not supported by the expand phase yet";
  if (protonet && !tasks.getWaysAttr())
    return train.emitOpError("protonet needs classification tasks with a "
                             "number of ways (classes per task)");
  if (anil && failed(selectHead(anil.getHead())))
    return failure();
  Location loc = train.getLoc();
  int64_t count = train.getMetaBatch();
  FunctionType modelType = model.getFunctionType();
  SmallVector<Type> paramTypes = learnedTypes();
  Type input = tasks.getInputType(), target = tasks.getTargetType();
  if (mixed && !maml && !anil && !metasgd && !protonet)
    return train.emitOpError(
        "mixes task classes, which needs maml, anil, metasgd or protonet");
  SmallVector<Type> batchTypes;
  for (const BatchPart &part : parts)
    llvm::append_range(
        batchTypes,
        SmallVector<Type>{stacked({part.count, part.support}, input),
                          stacked({part.count, part.support}, target),
                          stacked({part.count, part.query}, input),
                          stacked({part.count, part.query}, target)});

  // Optimizer state: per-parameter buffers, then the step count.
  OptimizerStateLayout layout = getOptimizerStateLayout(train.getOptimizer());
  SmallVector<Type> stateTypes;
  for (unsigned k = 0; k < layout.perParam; ++k)
    llvm::append_range(stateTypes, paramTypes);
  if (layout.stepCounter)
    stateTypes.push_back(RankedTensorType::get({}, b.getI64Type()));

  Type element =
      cast<RankedTensorType>(modelType.getResult(0)).getElementType();
  auto scalar = RankedTensorType::get({}, element);
  // Dynamic loss scaling: the scale the runtime keeps, after the state. It
  // multiplies the meta-loss inside the gradient request, so that every
  // cotangent of the meta-gradient (the second-order ones through the inner
  // backward included) carries it through the 16-bit model; the gradients
  // are divided by it in f32 before the guard sees them. (Reptile and iMAML
  // take no gradient of a meta-loss: nothing to scale.)
  bool scaled = train.scalesLoss() && !reptile && !imaml;
  SmallVector<Type> inputs(paramTypes);
  llvm::append_range(inputs, stateTypes);
  if (scaled)
    inputs.push_back(scalar);
  llvm::append_range(inputs, batchTypes);
  SmallVector<Type> results(paramTypes);
  llvm::append_range(results, stateTypes);
  results.push_back(scalar);
  if (guarded())
    results.push_back(RankedTensorType::get(
        {static_cast<int64_t>(paramTypes.size())}, b.getF64Type()));

  auto step =
      func::FuncOp::create(b, loc, name, b.getFunctionType(inputs, results));
  if (metasgd)
    nameLearnedParameters(step, metasgd.getInnerLr().convertToDouble());
  Block *entry = step.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  size_t n = paramTypes.size();
  ValueRange args = entry->getArguments();
  ValueRange params = args.take_front(n);
  ValueRange state = args.slice(n, stateTypes.size());
  ValueRange batch = args.take_back(batchTypes.size());
  Value lossScale;
  if (scaled) {
    unsigned index = n + stateTypes.size();
    lossScale = args[index];
    step.setArgAttr(index, kLossScaleAttrName, b.getUnitAttr());
    // metac-eval's inputs: a power of two, as the runtime's scales are.
    step.setArgAttr(index, "metac.eval.min", b.getF64FloatAttr(1024));
    step.setArgAttr(index, "metac.eval.max", b.getF64FloatAttr(1024));
  }

  // Reptile and iMAML: the tasks yield gradient-like values the step
  // averages (no gradient request around the map).
  if (reptile || imaml)
    return buildReptile(b, reptile, step, params, state, batch, batchTypes,
                        paramTypes, scalar, count);

  // The meta-gradient of the mean query loss over the batch's tasks.
  SmallVector<Type> gradTypes{scalar};
  llvm::append_range(gradTypes, paramTypes);
  auto grad = GradOp::create(b, loc, gradTypes, params, false);
  {
    OpBuilder::InsertionGuard inner(b);
    Block *body = b.createBlock(&grad.getBody());
    for (Type t : paramTypes)
      body->addArgument(t, loc);
    nn::NNBuilder nn(b, loc);
    Value metaLoss;
    for (auto [i, part] : llvm::enumerate(parts)) {
      auto map = MapOp::create(b, loc, TypeRange{stacked({part.count}, scalar)},
                               batch.slice(4 * i, 4), body->getArguments());
      Block *taskBody = createTaskBody(
          b, map, ArrayRef<Type>(batchTypes).slice(4 * i, 4), paramTypes, loc);
      ValueRange task = taskBody->getArguments().take_front(4);
      ValueRange theta = taskBody->getArguments().drop_front(4);
      FailureOr<Value> prediction;
      if (metasgd) {
        size_t half = theta.size() / 2;
        prediction = emitMetaSGDPrediction(
            b, mixed ? part.steps : metasgd.getSteps(), metasgd.getOrder(),
            theta.take_front(half), theta.drop_front(half), task);
      } else if (protonet) {
        prediction =
            emitPrototypeLogits(b, theta, task, tasks.getWaysAttr().getInt());
      } else {
        int64_t steps =
            mixed ? part.steps : (maml ? maml.getSteps() : anil.getSteps());
        double innerLr =
            (maml ? maml.getInnerLr() : anil.getInnerLr()).convertToDouble();
        int64_t order = maml ? maml.getOrder() : anil.getOrder();
        prediction = emitQueryPrediction(b, steps, innerLr, order, theta, task);
      }
      if (failed(prediction))
        return failure();
      YieldOp::create(b, loc, emitQueryLoss(b, *prediction, task));
      b.setInsertionPointAfter(map);
      if (!mixed) {
        metaLoss = nn.reduceMean(map.getResult(0), {0});
        continue;
      }
      Value sum = nn.reduceSum(map.getResult(0), {0});
      metaLoss = metaLoss ? nn.add(metaLoss, sum) : sum;
    }
    // Over the whole meta-batch: a task axis that splits it sums the
    // parts of its ranks, whatever their shares.
    if (mixed)
      metaLoss = nn.scale(metaLoss, 1.0 / train.getMetaBatch());
    YieldOp::create(b, loc, lossScale ? nn.mul(metaLoss, lossScale) : metaLoss);
  }
  if (!lossScale) {
    emitUpdateAndReturn(b, params, grad.getGradients(), state, grad.getValue());
    return step;
  }
  nn::NNBuilder nn(b, loc);
  Value inverse = nn.div(nn.onesLike(lossScale), lossScale);
  SmallVector<Value> unscaled;
  for (Value g : grad.getGradients()) {
    auto type = cast<RankedTensorType>(g.getType());
    Value factor = inverse;
    if (type.getRank() > 0)
      factor =
          nn.broadcast(inverse, type.getShape(),
                       llvm::to_vector(llvm::seq<int64_t>(type.getRank())));
    unscaled.push_back(nn.mul(g, factor));
  }
  emitUpdateAndReturn(b, params, unscaled, state,
                      nn.mul(grad.getValue(), inverse));
  return step;
}

void StepBuilder::emitUpdateAndReturn(OpBuilder &b, ValueRange params,
                                      ValueRange grads, ValueRange state,
                                      Value loss) {
  Location loc = train.getLoc();
  Value norms, gate;
  if (guarded()) {
    auto guard = UpdateGuardOp::create(
        b, loc,
        RankedTensorType::get({static_cast<int64_t>(grads.size())},
                              b.getF64Type()),
        RankedTensorType::get({2}, b.getF64Type()), loss, grads,
        train.getClipNormAttr());
    norms = guard.getNorms();
    gate = guard.getGate();
  }
  auto update = OuterStepOp::create(b, loc, train.getOptimizer(), params, grads,
                                    state, gate);
  SmallVector<Value> returned(update.getResults());
  returned.push_back(loss);
  if (norms)
    returned.push_back(norms);
  func::ReturnOp::create(b, loc, returned);
}

/// Reptile: each task's parameters after `steps` SGD steps on its support
/// set, phi; the outer optimizer gets theta - mean(phi) as its gradient, so
/// SGD with learning rate epsilon is theta + epsilon (mean(phi) - theta).
/// No meta-gradient: the inner gradients are first-order. The reported
/// loss is the query loss at phi.
FailureOr<func::FuncOp>
StepBuilder::buildReptile(OpBuilder &b, ReptileAttr reptile, func::FuncOp step,
                          ValueRange params, ValueRange state, ValueRange batch,
                          ArrayRef<Type> batchTypes, ArrayRef<Type> paramTypes,
                          Type scalar, int64_t count) {
  Location loc = train.getLoc();
  SmallVector<Type> mapTypes{stacked({count}, scalar)};
  for (Type t : paramTypes)
    mapTypes.push_back(stacked({count}, cast<RankedTensorType>(t)));
  auto map = MapOp::create(b, loc, mapTypes, batch, params);
  {
    OpBuilder::InsertionGuard inner(b);
    Block *taskBody = createTaskBody(b, map, batchTypes, paramTypes, loc);
    ValueRange task = taskBody->getArguments().take_front(4);
    ValueRange theta = taskBody->getArguments().drop_front(4);
    SmallVector<Value> yielded;
    if (reptile) {
      FailureOr<SmallVector<Value>> adapted = emitAdapted(
          b, reptile.getSteps(), reptile.getInnerLr().convertToDouble(),
          /*order=*/1, theta, task);
      if (failed(adapted))
        return failure();
      Value aux;
      FailureOr<Value> prediction =
          applyModel(b, model, *adapted, task[2], &aux);
      if (failed(prediction))
        return failure();
      yielded.push_back(
          emitLoss(b, loc, train.getLoss(), *prediction, task[3], aux));
      llvm::append_range(yielded, *adapted);
    } else {
      FailureOr<SmallVector<Value>> implicit = emitImplicitGradient(
          b, cast<IMAMLAttr>(train.getAlgorithm()), theta, task);
      if (failed(implicit))
        return failure();
      yielded = *implicit;
    }
    YieldOp::create(b, loc, yielded);
  }
  nn::NNBuilder nn(b, loc);
  SmallVector<Value> grads;
  for (auto [i, theta] : llvm::enumerate(params)) {
    Value mean = nn.reduceMean(map.getResult(i + 1), {0});
    // Reptile's gradient is theta - mean(phi); iMAML's tasks yield theirs.
    grads.push_back(reptile ? nn.sub(theta, mean) : mean);
  }
  emitUpdateAndReturn(b, params, grads, state,
                      nn.reduceMean(map.getResult(0), {0}));
  return step;
}

FailureOr<func::FuncOp>
StepBuilder::buildEvaluation(OpBuilder &b, TasksOp evalTasks, int64_t steps) {
  Location loc = train.getLoc();
  int64_t count = train.getMetaBatch();
  FunctionType modelType = model.getFunctionType();
  SmallVector<Type> paramTypes = learnedTypes();
  Type input = evalTasks.getInputType(), target = evalTasks.getTargetType();
  int64_t support = evalTasks.getSupport(), query = evalTasks.getQuery();
  SmallVector<Type> batchTypes = {
      stacked({count, support}, input), stacked({count, support}, target),
      stacked({count, query}, input), stacked({count, query}, target)};
  Type element =
      cast<RankedTensorType>(modelType.getResult(0)).getElementType();
  auto perTask = RankedTensorType::get({count}, element);
  // Classification is also scored by accuracy: a second result.
  bool classify = isa<ProtoNetAttr>(train.getAlgorithm()) ||
                  train.getLoss() == LossKind::CrossEntropy;
  SmallVector<Type> results{perTask};
  if (classify)
    results.push_back(perTask);
  SmallVector<Type> inputs(paramTypes);
  llvm::append_range(inputs, batchTypes);
  auto eval = func::FuncOp::create(
      b, loc, (train.getSymName() + ".eval" + Twine(steps)).str(),
      b.getFunctionType(inputs, results));
  Block *entry = eval.addEntryBlock();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entry);
  ValueRange args = entry->getArguments();
  auto map = MapOp::create(b, loc, results, args.take_back(4),
                           args.take_front(paramTypes.size()));
  Block *taskBody = createTaskBody(b, map, batchTypes, paramTypes, loc);
  ValueRange task = taskBody->getArguments().take_front(4);
  ValueRange learned = taskBody->getArguments().drop_front(4);
  FailureOr<Value> prediction;
  if (isa<ProtoNetAttr>(train.getAlgorithm())) {
    // ProtoNets adapt by averaging support embeddings: no steps.
    if (!evalTasks.getWaysAttr())
      return train.emitOpError("protonet needs classification tasks with a "
                               "number of ways (classes per task)");
    prediction =
        emitPrototypeLogits(b, learned, task, evalTasks.getWaysAttr().getInt());
  } else if (isa<MetaSGDAttr>(train.getAlgorithm())) {
    size_t half = learned.size() / 2;
    prediction =
        emitMetaSGDPrediction(b, steps, /*order=*/1, learned.take_front(half),
                              learned.drop_front(half), task);
  } else {
    // Evaluation needs no meta-gradient: first-order inner steps suffice.
    double innerLr = 0;
    if (auto maml = dyn_cast<MAMLAttr>(train.getAlgorithm()))
      innerLr = maml.getInnerLr().convertToDouble();
    else if (auto reptile = dyn_cast<ReptileAttr>(train.getAlgorithm()))
      innerLr = reptile.getInnerLr().convertToDouble();
    else if (auto imaml = dyn_cast<IMAMLAttr>(train.getAlgorithm()))
      innerLr = imaml.getInnerLr().convertToDouble();
    else if (auto anil = dyn_cast<ANILAttr>(train.getAlgorithm())) {
      innerLr = anil.getInnerLr().convertToDouble();
      if (failed(selectHead(anil.getHead())))
        return failure();
    }
    prediction =
        emitQueryPrediction(b, steps, innerLr, /*order=*/1, learned, task);
  }
  if (failed(prediction))
    return failure();
  withAux = false;
  SmallVector<Value> yielded{emitQueryLoss(b, *prediction, task)};
  withAux = true;
  if (classify)
    yielded.push_back(nn::AccuracyOp::create(
        b, loc, RankedTensorType::get({}, element), *prediction, task[3]));
  YieldOp::create(b, loc, yielded);
  b.setInsertionPointAfter(map);
  func::ReturnOp::create(b, loc, map.getResults());
  return eval;
}

struct MetaExpandPass
    : public metac::meta::impl::MetaExpandBase<MetaExpandPass> {
  using MetaExpandBase::MetaExpandBase;

  /// The steps of a mixed meta-batch: one per group of task ranks with the
  /// same share of each class (TaskAssignment.cpp).
  LogicalResult buildMixedSteps(OpBuilder &b, TrainOp train,
                                StepBuilder &builder, ArrayAttr mix) {
    return expandTaskGroups(train, mix, taskParts, balance,
                            [&](StringRef name, ArrayRef<BatchPart> parts) {
                              return builder.buildMixed(b, name, parts);
                            });
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    OpBuilder b(module.getContext());
    for (TrainOp train : llvm::to_vector(module.getOps<TrainOp>())) {
      auto model = module.lookupSymbol<func::FuncOp>(train.getModel());
      auto tasks = module.lookupSymbol<TasksOp>(train.getTasks());
      if (!model || !tasks) {
        train.emitOpError("refers to a missing model or task distribution");
        return signalPassFailure();
      }
      b.setInsertionPointAfter(train);
      StepBuilder builder(train, model, tasks);
      if (auto mix = train->getAttrOfType<ArrayAttr>("meta.task_mix")) {
        if (failed(buildMixedSteps(b, train, builder, mix)))
          return signalPassFailure();
      } else {
        FailureOr<func::FuncOp> step = builder.build(b);
        if (failed(step))
          return signalPassFailure();
        train->setAttr("meta.step", FlatSymbolRefAttr::get(*step));
      }
      // One evaluation function per number of adaptation steps.
      SmallVector<Attribute> evals;
      for (auto evaluate : train.getBody().front().getOps<EvaluateOp>()) {
        auto evalTasks = module.lookupSymbol<TasksOp>(evaluate.getTasks());
        for (int64_t steps : evaluate.getSteps()) {
          FailureOr<func::FuncOp> eval =
              builder.buildEvaluation(b, evalTasks, steps);
          if (failed(eval))
            return signalPassFailure();
          evals.push_back(FlatSymbolRefAttr::get(*eval));
        }
      }
      train->setAttr("meta.eval", b.getArrayAttr(evals));
    }
  }
};

} // namespace
