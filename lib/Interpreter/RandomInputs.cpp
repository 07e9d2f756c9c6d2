//===- RandomInputs.cpp - deterministic inputs for the interpreter --------===//

#include "metac/Interpreter/RandomInputs.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;
using namespace metac::interp;

uint64_t SplitMix64::next() {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::nextUnit() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

/// Reads argument `index`'s integer attribute `name` into `bound`, when the
/// argument has it.
static LogicalResult readBound(func::FuncOp func, unsigned index,
                               StringRef name, int64_t &bound) {
  Attribute attr = func.getArgAttr(index, name);
  if (!attr)
    return success();
  auto integer = dyn_cast<IntegerAttr>(attr);
  if (!integer || !integer.getValue().isSignedIntN(64))
    return emitError(func.getArgument(index).getLoc())
           << name << " of integer argument #" << index
           << " must be an integer attribute that fits in int64, got " << attr;
  bound = integer.getValue().getSExtValue();
  return success();
}

/// Reads argument `index`'s float or integer attribute `name` into `bound`,
/// when the argument has it.
static LogicalResult readBound(func::FuncOp func, unsigned index,
                               StringRef name, double &bound) {
  Attribute attr = func.getArgAttr(index, name);
  if (!attr)
    return success();
  if (auto number = dyn_cast<FloatAttr>(attr))
    bound = number.getValueAsDouble();
  else if (auto integer = dyn_cast<IntegerAttr>(attr))
    bound = integer.getValue().roundToDouble(/*isSigned=*/true);
  else
    return emitError(func.getArgument(index).getLoc())
           << name << " of float argument #" << index
           << " must be a float or integer attribute, got " << attr;
  return success();
}

/// Fills a float tensor of `type` with values uniform in [min, max), rounded
/// to the element type.
static LogicalResult fillFloats(func::FuncOp func, unsigned index,
                                RankedTensorType type, SplitMix64 &rng,
                                Tensor &tensor) {
  double min = -1.0, max = 1.0;
  if (failed(readBound(func, index, kEvalMinAttrName, min)) ||
      failed(readBound(func, index, kEvalMaxAttrName, max)))
    return failure();
  if (!(min <= max) || !std::isfinite(max - min))
    return emitError(func.getArgument(index).getLoc())
           << "argument #" << index << " has an empty or infinite range ["
           << llvm::formatv("{0}", min) << ", " << llvm::formatv("{0}", max)
           << ")";
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    APFloat value(min + (max - min) * rng.nextUnit());
    bool losesInfo = false;
    value.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
    tensor.values.push_back(value.convertToDouble());
  }
  return success();
}

/// Fills an integer tensor of `type` with values uniform in [min, max).
static LogicalResult fillIntegers(func::FuncOp func, unsigned index,
                                  RankedTensorType type, SplitMix64 &rng,
                                  Tensor &tensor) {
  int64_t min = 0, max = 2;
  if (failed(readBound(func, index, kEvalMinAttrName, min)) ||
      failed(readBound(func, index, kEvalMaxAttrName, max)))
    return failure();
  if (min >= max)
    return emitError(func.getArgument(index).getLoc())
           << "argument #" << index << " has an empty range [" << min << ", "
           << max << ")";
  uint64_t span = static_cast<uint64_t>(max) - static_cast<uint64_t>(min);
  tensor.isInteger = true;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i)
    tensor.ints.push_back(
        static_cast<int64_t>(static_cast<uint64_t>(min) + rng.next() % span));
  return success();
}

FailureOr<std::vector<Tensor>>
metac::interp::makeRandomInputs(func::FuncOp func, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<Tensor> inputs;
  for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
    if (!isSupportedType(type))
      return emitError(func.getArgument(index).getLoc())
             << "argument #" << index << " has unsupported type " << type
             << " (expected a statically shaped tensor of floats or integers "
                "of at most "
             << kMaxElements << " elements)";
    auto tensorType = cast<RankedTensorType>(type);
    Tensor tensor;
    llvm::append_range(tensor.shape, tensorType.getShape());
    bool integer = isa<IntegerType>(tensorType.getElementType());
    if (failed(integer ? fillIntegers(func, index, tensorType, rng, tensor)
                       : fillFloats(func, index, tensorType, rng, tensor)))
      return failure();
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}
