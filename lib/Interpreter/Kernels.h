//===- Kernels.h - the interpreter's op evaluators -------------*- C++ -*-===//
//
// One `evaluateOp` overload per nn op, defined in the file of its concept
// (Elementwise.cpp, Linear.cpp, ...). Each reads its operands from the frame
// of the current function invocation, trusts the op's verifier for shapes
// and attributes, and returns the op's single result, or reports a runtime
// error (an index out of range) at the op and fails.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_INTERPRETER_KERNELS_H
#define METAC_LIB_INTERPRETER_KERNELS_H

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Interpreter/Tensor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseMap.h"

namespace metac::interp::detail {

/// The tensors of the SSA values of one function invocation.
class Frame {
public:
  /// The tensor bound to `value`, which dominance guarantees is bound.
  const Tensor &get(mlir::Value value) const;
  /// Binds `value` to `tensor`.
  void bind(mlir::Value value, Tensor tensor);

private:
  llvm::DenseMap<mlir::Value, Tensor> tensors;
};

// Optimizers.cpp: the update guard (norms, gate) and the outer optimizer
// step (new parameters, then state).
std::vector<Tensor> evaluateUpdateGuard(meta::UpdateGuardOp op,
                                        const Frame &frame);
mlir::FailureOr<std::vector<Tensor>> evaluateOuterStep(meta::OuterStepOp op,
                                                       const Frame &frame);

// Constant.cpp: dense tensor constants.
mlir::FailureOr<Tensor> evaluateOp(mlir::arith::ConstantOp op,
                                   const Frame &frame);

// Elementwise.cpp: unary maps, scale, binary arithmetic, stop_gradient.
mlir::FailureOr<Tensor> evaluateOp(nn::NegOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::ExpOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::LogOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::SqrtOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::RsqrtOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::ErfOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::ReluOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::StepOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::TanhOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::SigmoidOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::GeluOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::ScaleOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::ConvertOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::StopGradientOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::AddOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::SubOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::MulOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::DivOp op, const Frame &frame);

// Linear.cpp: affine layers and batched matrix products.
mlir::FailureOr<Tensor> evaluateOp(nn::LinearOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::MatmulOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::AttentionOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::AttentionBackwardOp op,
                                   const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::AttentionDoubleBackwardOp op,
                                   const Frame &frame);

// Convolution.cpp: conv2d and its two derivatives.
mlir::FailureOr<Tensor> evaluateOp(nn::Conv2DOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::Conv2DBackwardInputOp op,
                                   const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::Conv2DBackwardWeightOp op,
                                   const Frame &frame);

// Pooling.cpp: max and average pooling, their derivatives, the gather.
mlir::FailureOr<Tensor> evaluateOp(nn::MaxPool2DOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::AvgPool2DOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::MaxPool2DBackwardOp op,
                                   const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::MaxPool2DGatherOp op,
                                   const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::AvgPool2DBackwardOp op,
                                   const Frame &frame);

// Normalization.cpp: batch and layer normalisation, (log-)softmax.
mlir::FailureOr<Tensor> evaluateOp(nn::BatchNormOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::LayerNormOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::SoftmaxOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::LogSoftmaxOp op, const Frame &frame);

// Shape.cpp: reshape, transpose, broadcast and reductions.
mlir::FailureOr<Tensor> evaluateOp(nn::ReshapeOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::TransposeOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::BroadcastOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::ReduceSumOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::ReduceMeanOp op, const Frame &frame);

// Losses.cpp: mean squared error, softmax cross-entropy and accuracy.
mlir::FailureOr<Tensor> evaluateOp(nn::MSELossOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::CrossEntropyLossOp op,
                                   const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::AccuracyOp op, const Frame &frame);

// Indexing.cpp: the ops indexed by integer tensors.
mlir::FailureOr<Tensor> evaluateOp(nn::OneHotOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::MoeDispatchOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::EmbeddingOp op, const Frame &frame);
mlir::FailureOr<Tensor> evaluateOp(nn::EmbeddingBackwardOp op,
                                   const Frame &frame);

} // namespace metac::interp::detail

#endif // METAC_LIB_INTERPRETER_KERNELS_H
