//===- RuntimeEvaluator.cpp - nn functions on the runtime's kernels -------===//

#include "RuntimeEvaluator.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cstring>
#include <memory>
#include <optional>

using namespace mlir;
using metac::interp::Tensor;

namespace metart::test {

/// The runtime element type of a tensor type, or -1 when it has none.
static int dtypeOf(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return -1;
  Type element = tensor.getElementType();
  if (element.isF32())
    return METART_F32;
  if (element.isF64())
    return METART_F64;
  if (element.isSignlessInteger(32))
    return METART_I32;
  if (element.isSignlessInteger(64))
    return METART_I64;
  if (element.isBF16())
    return METART_BF16;
  if (element.isF16())
    return METART_F16;
  return -1;
}

/// Bytes per element of a runtime element type.
static size_t widthOf(int dtype) {
  switch (dtype) {
  case METART_F32:
  case METART_I32:
    return 4;
  case METART_BF16:
  case METART_F16:
    return 2;
  default:
    return 8;
  }
}

/// The float semantics of a 16-bit runtime element type. The test converts
/// with LLVM's APFloat, independently of the runtime's own conversions.
static const llvm::fltSemantics &semanticsOf(int dtype) {
  return dtype == METART_BF16 ? APFloat::BFloat() : APFloat::IEEEhalf();
}

bool isRunnable(func::FuncOp func) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return false;
  for (Type type : func.getArgumentTypes())
    if (dtypeOf(type) < 0)
      return false;
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op))
      continue;
    bool known =
        isa<arith::ConstantOp>(op) || op.getDialect()->getNamespace() == "nn";
    if (!known || op.getNumResults() != 1 ||
        dtypeOf(op.getResult(0).getType()) < 0)
      return false;
  }
  return true;
}

namespace {
/// A tensor in the runtime's memory: the descriptor and the shape it
/// points to.
struct DeviceTensor {
  std::vector<int64_t> shape;
  metart_tensor tensor;
};

/// Runs the ops of one function, keeping each value's device tensor.
class Evaluator {
public:
  Evaluator(metart_context *context, std::string &error)
      : context(context), error(error) {}

  /// Allocates `value`'s tensor and copies `input` into it.
  LogicalResult upload(Value value, const Tensor &input);
  /// Runs `op` into a newly allocated result.
  LogicalResult run(Operation *op);
  /// Copies `value`'s tensor back.
  FailureOr<Tensor> download(Value value);

private:
  /// Allocates scratch memory for a value of `type`.
  FailureOr<DeviceTensor *> allocate(Value value);
  /// The kernel call of `op` (of a constant only if it is a splat), writing
  /// `y`; none when the op has no runtime call.
  std::optional<metart_status> call(Operation *op, const metart_tensor *y);
  /// The device tensor of `value`, null for a null value (an absent bias).
  const metart_tensor *get(Value value) const {
    return value ? &values.find(value)->second->tensor : nullptr;
  }
  /// Records the runtime's last error for `what` and fails.
  LogicalResult fail(const std::string &what);

  metart_context *context;
  std::string &error;
  llvm::DenseMap<Value, std::unique_ptr<DeviceTensor>> values;
};
} // namespace

LogicalResult Evaluator::fail(const std::string &what) {
  error = what + ": " + metart_context_last_error(context);
  return failure();
}

FailureOr<DeviceTensor *> Evaluator::allocate(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto device = std::make_unique<DeviceTensor>();
  device->shape.assign(type.getShape().begin(), type.getShape().end());
  int dtype = dtypeOf(type);
  size_t bytes = static_cast<size_t>(type.getNumElements()) * widthOf(dtype);
  void *data = nullptr;
  if (metart_scratch_alloc(context, bytes, &data) != METART_OK) {
    (void)fail("allocating a value");
    return failure();
  }
  device->tensor = {data, dtype, static_cast<int32_t>(device->shape.size()),
                    device->shape.data()};
  DeviceTensor *result = device.get();
  values[value] = std::move(device);
  return result;
}

LogicalResult Evaluator::upload(Value value, const Tensor &input) {
  FailureOr<DeviceTensor *> device = allocate(value);
  if (failed(device))
    return failure();
  int64_t n = input.numElements();
  std::vector<char> host;
  auto pack = [&](auto zero, auto get) {
    using T = decltype(zero);
    host.resize(n * sizeof(T));
    for (int64_t i = 0; i < n; ++i) {
      T element = static_cast<T>(get(i));
      std::memcpy(host.data() + i * sizeof(T), &element, sizeof(T));
    }
  };
  auto real = [&](int64_t i) { return input.values[i]; };
  auto integer = [&](int64_t i) { return input.ints[i]; };
  switch ((*device)->tensor.dtype) {
  case METART_F32:
    pack(float(), real);
    break;
  case METART_F64:
    pack(double(), real);
    break;
  case METART_I32:
    pack(int32_t(), integer);
    break;
  case METART_BF16:
  case METART_F16: {
    const llvm::fltSemantics &semantics = semanticsOf((*device)->tensor.dtype);
    pack(uint16_t(), [&](int64_t i) {
      APFloat v(input.values[i]);
      bool lost = false;
      v.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
      return static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
    });
    break;
  }
  default:
    pack(int64_t(), integer);
    break;
  }
  if (metart_copy_to_device(context, (*device)->tensor.data, host.data(),
                            host.size()) != METART_OK)
    return fail("uploading an input");
  return success();
}

FailureOr<Tensor> Evaluator::download(Value value) {
  const metart_tensor &t = *get(value);
  Tensor result;
  result.shape.assign(t.shape, t.shape + t.rank);
  int64_t n = result.numElements();
  std::vector<char> host(n * widthOf(t.dtype));
  if (metart_copy_to_host(context, host.data(), t.data, host.size()) !=
      METART_OK) {
    (void)fail("downloading a result");
    return failure();
  }
  auto unpack = [&](auto zero, auto &into) {
    using T = decltype(zero);
    for (int64_t i = 0; i < n; ++i) {
      T element;
      std::memcpy(&element, host.data() + i * sizeof(T), sizeof(T));
      into.push_back(element);
    }
  };
  result.isInteger = t.dtype == METART_I32 || t.dtype == METART_I64;
  switch (t.dtype) {
  case METART_F32:
    unpack(float(), result.values);
    break;
  case METART_F64:
    unpack(double(), result.values);
    break;
  case METART_I32:
    unpack(int32_t(), result.ints);
    break;
  case METART_BF16:
  case METART_F16: {
    std::vector<uint16_t> bits;
    unpack(uint16_t(), bits);
    for (uint16_t b : bits)
      result.values.push_back(
          APFloat(semanticsOf(t.dtype), APInt(16, b)).convertToDouble());
    break;
  }
  default:
    unpack(int64_t(), result.ints);
    break;
  }
  return result;
}

/// The values of a dense constant as the interpreter holds them.
static FailureOr<Tensor> constantValue(arith::ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return failure();
  Tensor t;
  t.shape.assign(dense.getType().getShape().begin(),
                 dense.getType().getShape().end());
  if (isa<FloatType>(dense.getElementType())) {
    for (APFloat value : dense.getValues<APFloat>()) {
      bool losesInfo = false;
      value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
      t.values.push_back(value.convertToDouble());
    }
    return t;
  }
  t.isInteger = true;
  for (const APInt &value : dense.getValues<APInt>())
    t.ints.push_back(value.getSExtValue());
  return t;
}

std::optional<metart_status> Evaluator::call(Operation *op,
                                             const metart_tensor *y) {
  metart_context *c = context;
  auto in = [&](unsigned i) { return get(op->getOperand(i)); };
  auto unary = [&](metart_unary_op kind) {
    return metart_nn_unary(c, kind, in(0), y);
  };
  auto binary = [&](metart_binary_op kind) {
    return metart_nn_binary(c, kind, in(0), in(1), y);
  };
  auto copy = [&](Operation *) {
    const metart_tensor *x = in(0);
    size_t width = widthOf(x->dtype);
    size_t count = 1;
    for (int d = 0; d < x->rank; ++d)
      count *= static_cast<size_t>(x->shape[d]);
    return metart_copy_device(c, y->data, x->data, count * width);
  };
  using namespace metac::nn;
  return llvm::TypeSwitch<Operation *, std::optional<metart_status>>(op)
      .Case([&](arith::ConstantOp constant) {
        auto dense = cast<DenseElementsAttr>(constant.getValue());
        double value = isa<FloatType>(dense.getElementType())
                           ? dense.getSplatValue<APFloat>().convertToDouble()
                           : static_cast<double>(
                                 dense.getSplatValue<APInt>().getSExtValue());
        return metart_fill(c, y, value);
      })
      .Case([&](NegOp) { return unary(METART_NEG); })
      .Case([&](ExpOp) { return unary(METART_EXP); })
      .Case([&](LogOp) { return unary(METART_LOG); })
      .Case([&](SqrtOp) { return unary(METART_SQRT); })
      .Case([&](RsqrtOp) { return unary(METART_RSQRT); })
      .Case([&](ErfOp) { return unary(METART_ERF); })
      .Case([&](ReluOp) { return unary(METART_RELU); })
      .Case([&](StepOp) { return unary(METART_STEP); })
      .Case([&](TanhOp) { return unary(METART_TANH); })
      .Case([&](SigmoidOp) { return unary(METART_SIGMOID); })
      .Case([&](GeluOp) { return unary(METART_GELU); })
      .Case([&](ScaleOp o) {
        return metart_nn_scale(c, in(0), o.getFactor().convertToDouble(), y);
      })
      .Case([&](AddOp) { return binary(METART_ADD); })
      .Case([&](SubOp) { return binary(METART_SUB); })
      .Case([&](MulOp) { return binary(METART_MUL); })
      .Case([&](DivOp) { return binary(METART_DIV); })
      .Case<ReshapeOp, StopGradientOp>(copy)
      .Case([&](ConvertOp) { return metart_convert(c, in(0), y); })
      .Case([&](LinearOp o) {
        return metart_nn_linear(c, get(o.getInput()), get(o.getWeight()),
                                get(o.getBias()), y);
      })
      .Case([&](MatmulOp o) {
        return metart_nn_matmul(c, in(0), in(1), o.getTransposeLhs(),
                                o.getTransposeRhs(), y);
      })
      .Case([&](AttentionOp o) {
        return metart_nn_attention(c, in(0), in(1), in(2),
                                   o.getScale().convertToDouble(),
                                   o.getCausal(), y);
      })
      .Case([&](AttentionBackwardOp o) {
        // One cotangent per call here; the lowering's calls that compute
        // two or three at once are checked end to end (attention.test).
        StringRef wrt = o.getWrt();
        return metart_nn_attention_backward(
            c, in(0), in(1), in(2), in(3), o.getScale().convertToDouble(),
            o.getCausal(), wrt == "query" ? y : nullptr,
            wrt == "key" ? y : nullptr, wrt == "value" ? y : nullptr);
      })
      .Case([&](AttentionDoubleBackwardOp o) {
        StringRef from = o.getFrom(), wrt = o.getWrt();
        const metart_tensor *g = in(4);
        return metart_nn_attention_double_backward(
            c, in(0), in(1), in(2), in(3), from == "query" ? g : nullptr,
            from == "key" ? g : nullptr, from == "value" ? g : nullptr,
            o.getScale().convertToDouble(), o.getCausal(),
            wrt == "query" ? y : nullptr, wrt == "key" ? y : nullptr,
            wrt == "value" ? y : nullptr, wrt == "grad" ? y : nullptr);
      })
      .Case([&](Conv2DOp o) {
        return metart_nn_conv2d(c, get(o.getInput()), get(o.getWeight()),
                                get(o.getBias()), o.getStride().data(),
                                o.getPadding().data(), y);
      })
      .Case([&](Conv2DBackwardInputOp o) {
        return metart_nn_conv2d_backward_input(
            c, in(0), in(1), o.getStride().data(), o.getPadding().data(), y);
      })
      .Case([&](Conv2DBackwardWeightOp o) {
        return metart_nn_conv2d_backward_weight(
            c, in(0), in(1), o.getStride().data(), o.getPadding().data(), y);
      })
      .Case([&](MaxPool2DOp o) {
        return metart_nn_max_pool2d(c, in(0), o.getKernel().data(),
                                    o.getStride().data(), o.getPadding().data(),
                                    y);
      })
      .Case([&](AvgPool2DOp o) {
        return metart_nn_avg_pool2d(c, in(0), o.getKernel().data(),
                                    o.getStride().data(), o.getPadding().data(),
                                    y);
      })
      .Case([&](MaxPool2DBackwardOp o) {
        return metart_nn_max_pool2d_backward(
            c, in(0), in(1), o.getKernel().data(), o.getStride().data(),
            o.getPadding().data(), y);
      })
      .Case([&](MaxPool2DGatherOp o) {
        return metart_nn_max_pool2d_gather(
            c, in(0), in(1), o.getKernel().data(), o.getStride().data(),
            o.getPadding().data(), y);
      })
      .Case([&](AvgPool2DBackwardOp o) {
        return metart_nn_avg_pool2d_backward(c, in(0), o.getKernel().data(),
                                             o.getStride().data(),
                                             o.getPadding().data(), y);
      })
      .Case([&](BatchNormOp o) {
        ArrayRef<int64_t> reduce = o.getReduceDims();
        return metart_nn_batch_norm(
            c, in(0), in(1), in(2), static_cast<int64_t>(o.getChannelDim()),
            reduce.data(), static_cast<int64_t>(reduce.size()),
            o.getEpsilon().convertToDouble(), y);
      })
      .Case([&](LayerNormOp o) {
        return metart_nn_layer_norm(c, in(0), in(1), in(2),
                                    o.getEpsilon().convertToDouble(), y);
      })
      .Case([&](SoftmaxOp o) {
        return metart_nn_softmax(c, in(0), static_cast<int64_t>(o.getAxis()),
                                 y);
      })
      .Case([&](LogSoftmaxOp o) {
        return metart_nn_log_softmax(c, in(0),
                                     static_cast<int64_t>(o.getAxis()), y);
      })
      .Case(
          [&](EmbeddingOp) { return metart_nn_embedding(c, in(0), in(1), y); })
      .Case([&](EmbeddingBackwardOp) {
        return metart_nn_embedding_backward(c, in(0), in(1), y);
      })
      .Case([&](OneHotOp) { return metart_nn_one_hot(c, in(0), y); })
      .Case([&](MoeDispatchOp o) {
        return metart_nn_moe_dispatch(c, in(0), o.getTopK(), y);
      })
      .Case([&](TransposeOp o) {
        return metart_nn_transpose(c, in(0), o.getPermutation().data(), y);
      })
      .Case([&](BroadcastOp o) {
        ArrayRef<int64_t> dims = o.getDimensions();
        return metart_nn_broadcast(c, in(0), dims.data(),
                                   static_cast<int64_t>(dims.size()), y);
      })
      .Case([&](ReduceSumOp o) {
        ArrayRef<int64_t> dims = o.getDimensions();
        return metart_nn_reduce_sum(c, in(0), dims.data(),
                                    static_cast<int64_t>(dims.size()), y);
      })
      .Case([&](ReduceMeanOp o) {
        ArrayRef<int64_t> dims = o.getDimensions();
        return metart_nn_reduce_mean(c, in(0), dims.data(),
                                     static_cast<int64_t>(dims.size()), y);
      })
      .Case([&](MSELossOp o) {
        return metart_nn_mse_loss(c, in(0), in(1),
                                  static_cast<int64_t>(o.getBatchRank()), y);
      })
      .Case([&](CrossEntropyLossOp o) {
        return metart_nn_cross_entropy_loss(
            c, in(0), in(1), static_cast<int64_t>(o.getBatchRank()), y);
      })
      .Case([&](AccuracyOp o) {
        return metart_nn_accuracy(c, in(0), in(1),
                                  static_cast<int64_t>(o.getBatchRank()), y);
      })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult Evaluator::run(Operation *op) {
  std::string name = op->getName().getStringRef().str();
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense) {
      error = name + ": only dense constants are supported";
      return failure();
    }
    if (!dense.isSplat()) {
      FailureOr<Tensor> value = constantValue(constant);
      return failed(value) ? failure() : upload(constant.getResult(), *value);
    }
  }
  FailureOr<DeviceTensor *> result = allocate(op->getResult(0));
  if (failed(result))
    return failure();
  std::optional<metart_status> status = call(op, &(*result)->tensor);
  if (!status) {
    error = name + ": no runtime call for this op";
    return failure();
  }
  if (*status != METART_OK)
    return fail(name);
  return success();
}

FailureOr<std::vector<Tensor>> evaluateWithRuntime(metart_context *context,
                                                   func::FuncOp func,
                                                   ArrayRef<Tensor> inputs,
                                                   std::string &error) {
  Evaluator evaluator(context, error);
  std::vector<Tensor> outputs;
  auto runAll = [&]() -> LogicalResult {
    for (auto [argument, input] : llvm::zip_equal(func.getArguments(), inputs))
      if (failed(evaluator.upload(argument, input)))
        return failure();
    for (Operation &op : func.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        for (Value value : ret.getOperands()) {
          FailureOr<Tensor> output = evaluator.download(value);
          if (failed(output))
            return failure();
          outputs.push_back(std::move(*output));
        }
        return success();
      }
      if (failed(evaluator.run(&op)))
        return failure();
    }
    return success();
  };
  LogicalResult result = runAll();
  metart_scratch_reset(context);
  if (failed(result))
    return failure();
  return outputs;
}

} // namespace metart::test
