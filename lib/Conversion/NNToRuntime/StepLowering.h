//===- StepLowering.h - one step function to metart calls -------*- C++ -*-===//
//
// The lowering of one function (a training step, an evaluation, a stage)
// op by op into calls of the runtime; its parts live in NNToRuntime.cpp
// (the ops) and UpdateLowering.cpp (the outer updates and their guard).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CONVERSION_NNTORUNTIME_STEPLOWERING_H
#define METAC_LIB_CONVERSION_NNTORUNTIME_STEPLOWERING_H

#include "RuntimeCallEmitter.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"

#include <string>

namespace metac::lowering {

/// The bytes of a static tensor type.
inline int64_t byteSize(mlir::Type type) {
  auto t = mlir::cast<mlir::RankedTensorType>(type);
  return t.getNumElements() * (t.getElementTypeBitWidth() / 8);
}

class StepLowering {
public:
  StepLowering(RuntimeCallEmitter &emit, mlir::func::FuncOp step,
               llvm::StringRef name, int64_t &nextSite)
      : step(step), name(name.str()), emit(emit), nextSite(nextSite) {}

  mlir::LogicalResult lower();

private:
  mlir::Value operand(mlir::Value v) { return descriptors.lookup(v); }
  /// The descriptor of `op`'s result: a new one in scratch memory, or the
  /// one given in advance (a fused group's result, lowered op by op).
  mlir::Value result(mlir::Operation *op) {
    if (mlir::Value given = descriptors.lookup(op->getResult(0)))
      return given;
    mlir::Value d = emit.descriptor(
        mlir::cast<mlir::RankedTensorType>(op->getResult(0).getType()));
    descriptors[op->getResult(0)] = d;
    return d;
  }
  mlir::LogicalResult lowerOp(mlir::Operation *op);
  mlir::LogicalResult lowerConstant(mlir::arith::ConstantOp op);
  mlir::LogicalResult lowerOuterStep(meta::OuterStepOp op);
  mlir::LogicalResult lowerServerStep(meta::ServerStepOp op);
  void lowerUpdateGuard(meta::UpdateGuardOp op);
  mlir::LogicalResult lowerConcat(mlir::tensor::ConcatOp op);
  mlir::LogicalResult lowerSlice(mlir::tensor::ExtractSliceOp op);
  void lowerAttentionBackward(nn::AttentionBackwardOp op);
  void lowerAttentionDoubleBackward(nn::AttentionDoubleBackwardOp op);
  void lowerReturn(mlir::func::ReturnOp op);
  mlir::LogicalResult lowerFused(nn::FusedOp op);
  mlir::LogicalResult lowerFusedByOps(nn::FusedOp op,
                                      llvm::ArrayRef<mlir::Value> results);
  mlir::LLVM::LLVMFuncOp thunkOf(nn::FusedOp op);

  mlir::func::FuncOp step;
  std::string name;
  RuntimeCallEmitter &emit;
  llvm::DenseMap<mlir::Value, mlir::Value> descriptors;
  /// The next call site of a compressed all-reduce with error feedback
  /// (numbered over the module: the runtime keeps its state per site).
  int64_t &nextSite;
};

} // namespace metac::lowering

#endif // METAC_LIB_CONVERSION_NNTORUNTIME_STEPLOWERING_H
