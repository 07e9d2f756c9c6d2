//===- NNBuilder.h - nn ops with their result types inferred ----*- C++ -*-===//
//
// Builds nn ops (and splat constants) from operands alone, computing result
// types, so that derivative rules and rewrites read like the math they
// implement. Operands are assumed valid: the ops' verifiers check them.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_DIALECT_NN_IR_NNBUILDER_H
#define METAC_DIALECT_NN_IR_NNBUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace metac::nn {

class NNBuilder {
public:
  NNBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  mlir::OpBuilder &getBuilder() { return b; }
  mlir::Location getLoc() const { return loc; }

  /// A tensor of `type` filled with `value` (an arith.constant splat).
  mlir::Value constant(mlir::RankedTensorType type, double value);
  mlir::Value zerosLike(mlir::Value v);
  mlir::Value onesLike(mlir::Value v);

  // Elementwise.
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value neg(mlir::Value x);
  mlir::Value scale(mlir::Value x, double factor);
  /// `x` in the float element type `element` (`x` itself if it has it).
  mlir::Value convert(mlir::Value x, mlir::Type element);
  mlir::Value exp(mlir::Value x);
  mlir::Value erf(mlir::Value x);
  mlir::Value rsqrt(mlir::Value x);
  mlir::Value step(mlir::Value x);
  mlir::Value softmax(mlir::Value x, int64_t axis);

  // Shapes.
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> permutation);
  /// Swaps the last two dimensions.
  mlir::Value transposeLastTwo(mlir::Value x);
  /// Sums the sorted `dims` away.
  mlir::Value reduceSum(mlir::Value x, llvm::ArrayRef<int64_t> dims);
  mlir::Value reduceMean(mlir::Value x, llvm::ArrayRef<int64_t> dims);
  /// Replicates `x` into `shape` along the new sorted `dims` of the result.
  mlir::Value broadcast(mlir::Value x, llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<int64_t> dims);

  /// Fused softmax(scale q k^T [causal mask]) v.
  mlir::Value attention(mlir::Value q, mlir::Value k, mlir::Value v,
                        double scale, bool causal);

  /// The cotangent of `attention(q, k, v)`'s operand `wrt` ("query", "key"
  /// or "value"), given the output's cotangent `dy`.
  mlir::Value attentionBackward(mlir::Value q, mlir::Value k, mlir::Value v,
                                mlir::Value dy, double scale, bool causal,
                                llvm::StringRef wrt);
  /// The cotangent of the operand `wrt` ("query", "key", "value" or
  /// "grad") of `attentionBackward(q, k, v, dy, ..., from)`, given the
  /// cotangent `g` of its result.
  mlir::Value attentionDoubleBackward(mlir::Value q, mlir::Value k,
                                      mlir::Value v, mlir::Value dy,
                                      mlir::Value g, double scale, bool causal,
                                      llvm::StringRef from,
                                      llvm::StringRef wrt);

  // Products.
  mlir::Value matmul(mlir::Value a, mlir::Value b, bool transposeA = false,
                     bool transposeB = false);
  mlir::Value linear(mlir::Value x, mlir::Value weight,
                     mlir::Value bias = nullptr);

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

/// The dimensions of a rank-`rank` shape that are not in `kept`.
llvm::SmallVector<int64_t> complementDims(int64_t rank,
                                          llvm::ArrayRef<int64_t> kept);

} // namespace metac::nn

#endif // METAC_DIALECT_NN_IR_NNBUILDER_H
