//===- ModelGenerator.h - the generator of model functions ------*- C++ -*-===//
//
// The state of generating one model's func.func: its parameters (leading
// arguments), the names in scope, and one method per builtin. Private to the
// frontend; the generator's parts live in ModelGen.cpp (statements and
// expressions), ModelArguments.cpp (call arguments and parameters),
// ModelLayers.cpp (builtins with parameters) and ModelTensorOps.cpp (the
// others).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_FRONTEND_MODELGENERATOR_H
#define METAC_LIB_FRONTEND_MODELGENERATOR_H

#include "GenUtils.h"
#include "metac/Frontend/AST.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace metac::frontend {

using mlir::ArrayRef;
using mlir::Block;
using mlir::Location;
using mlir::NamedAttrList;
using mlir::OpBuilder;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::SmallVector;
using mlir::StringRef;
using mlir::Type;
using mlir::Value;

/// Whether `v` is a tensor of floats.
inline bool isFloatTensor(Value v) {
  return mlir::isa<mlir::FloatType>(
      mlir::cast<RankedTensorType>(v.getType()).getElementType());
}

/// A generated value: a tensor, or a plain number (`0.5 * x`).
struct Operand {
  Value tensor;
  std::optional<double> number = std::nullopt;
  bool isInteger = false;
  explicit operator bool() const { return tensor || number; }
};

/// Names visible in a model or block body and how its layers are named.
struct Scope {
  /// Null values mark names whose definition failed (no cascading errors).
  llvm::StringMap<Value> vars;
  /// Prefix of every parameter created here ("" or "enc." in a block).
  std::string prefix;
  /// Suffix of repeat iterations (".0", ".2.1").
  std::string repeatSuffix;
  /// Per-op counters for automatic layer names (`linear0`, `conv2d1`).
  llvm::StringMap<unsigned> counters;
  std::optional<Value> result;
};

/// Bounds the inlining of nested blocks (and catches recursion early).
constexpr unsigned kMaxBlockDepth = 32;
/// Bounds the unrolled size of a model.
constexpr int64_t kMaxOps = 1 << 20;

/// Generates one model (and the blocks it calls, inlined).
class ModelGenerator {
public:
  ModelGenerator(const llvm::StringMap<const FunctionDecl *> &blocks,
                 SourceDiagnostics &diags, OpBuilder &builder)
      : blocks(blocks), diags(diags), builder(builder) {}

  mlir::func::FuncOp generate(const FunctionDecl &model);

private:
  Location loc(SourceLoc l) { return diags.getLocation(l); }

  // Statements.
  bool genBody(const std::vector<StmtPtr> &body, Scope &scope);
  bool genStatement(const Stmt &stmt, Scope &scope);

  // Expressions.
  Operand genExpr(const Expr &expr, Scope &scope);
  Value genTensor(const Expr &expr, Scope &scope, StringRef what);
  Operand genBinary(const BinaryExpr &expr, Scope &scope);
  Value genCall(const CallExpr &call, Scope &scope);
  Value genBuiltin(const CallExpr &call, Scope &scope);
  Value genAttention(const CallExpr &call, Scope &scope);

  // Builtins of one tensor `x` (the call's first argument, generated), one
  // per family; ModelLayers.cpp creates parameters, ModelTensorOps.cpp not.
  static bool isUnary(StringRef callee);
  Value genUnary(const CallExpr &call, Scope &scope);
  Value genMatmul(const CallExpr &call, Scope &scope);
  Value genMoe(const CallExpr &call, Scope &scope);
  /// Adds an MoE layer's weighted load-balancing loss to `auxLosses`.
  bool addBalanceLoss(Location l, Value probs, Value mask, int64_t topK,
                      double weight);
  Value genLinear(const CallExpr &call, Scope &scope, Value x);
  Value genConv2D(const CallExpr &call, Scope &scope, Value x);
  Value genPool2D(const CallExpr &call, Value x);
  Value genNorm(const CallExpr &call, Scope &scope, Value x);
  Value genEmbedding(const CallExpr &call, Scope &scope, Value x);
  Value genSoftmax(const CallExpr &call, Value x);
  Value genReshape(const CallExpr &call, Value x);
  Value genTranspose(const CallExpr &call, Value x);
  Value genReduction(const CallExpr &call, Value x);
  Value genPositions(const CallExpr &call, Value x);
  Value genBlockCall(const CallExpr &call, const FunctionDecl &block,
                     Scope &scope);

  // Arguments of calls.
  bool checkArguments(const CallExpr &call, size_t minPositional,
                      size_t maxPositional, ArrayRef<StringRef> keywords);
  /// Exactly `positional` positional arguments and keywords from `allowed`.
  bool onlyKeywords(const CallExpr &call, size_t positional,
                    ArrayRef<StringRef> allowed) {
    return checkArguments(call, positional, positional, allowed);
  }
  /// `axis` of `type` counted from the front (negative: from the back), or
  /// nullopt after an error at `where`.
  std::optional<int64_t> normaliseAxis(RankedTensorType type, int64_t axis,
                                       const Expr &where);
  const Expr *keyword(const CallExpr &call, StringRef name);
  std::optional<int64_t> intValue(const Expr &expr, StringRef what,
                                  int64_t min);
  std::optional<double> numberValue(const Expr &expr, StringRef what);
  std::optional<SmallVector<int64_t>> intPair(const Expr *expr, StringRef what,
                                              int64_t def, int64_t min);
  std::optional<SmallVector<int64_t>> intList(const Expr &expr, StringRef what);
  std::optional<bool> boolValue(const Expr *expr, StringRef what, bool def);

  // Parameters.
  /// Letters, digits, '_' and '.', at least one.
  static bool isLayerName(StringRef name);
  std::optional<std::string> layerName(const CallExpr &call, Scope &scope);
  Value createParam(StringRef layer, StringRef suffix, ArrayRef<int64_t> shape,
                    Type element, StringRef init, int64_t fanIn,
                    SourceLoc where);

  /// Verifies a freshly built op (reporting at its location) and returns its
  /// result, or null.
  Value finish(Operation *op);
  bool requireFloat(Value v, const CallExpr &call);
  bool requireRank(Value v, const CallExpr &call, int64_t minRank,
                   StringRef layout);

  const llvm::StringMap<const FunctionDecl *> &blocks;
  SourceDiagnostics &diags;
  OpBuilder &builder;
  Block *entry = nullptr;
  unsigned numParams = 0;
  SmallVector<NamedAttrList> paramAttrs;
  llvm::StringMap<SourceLoc> paramLocs;
  Type paramElementType;
  SmallVector<const FunctionDecl *> activeBlocks;
  int64_t opCount = 0;
  bool reportedOpLimit = false;
  /// Per-sample auxiliary losses of the layers (MoE load balancing): their
  /// sum is the model's second result, `meta.aux_loss`.
  SmallVector<Value> auxLosses;
  /// Causal attention masks by type, built once.
  llvm::DenseMap<Type, mlir::DenseElementsAttr> causalMasks;
};

} // namespace metac::frontend

#endif // METAC_LIB_FRONTEND_MODELGENERATOR_H
