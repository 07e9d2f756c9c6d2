//===- Sharding.h - how a value is distributed over the mesh ----*- C++ -*-===//

#ifndef METAC_LIB_PARTITION_SHARDING_H
#define METAC_LIB_PARTITION_SHARDING_H

#include "metac/Partition/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace metac::partition {

/// A dimension not split over any mesh axis.
constexpr int kReplicated = -1;

/// A dimension split over the data and expert axes at once, data major (as
/// the runtime shards samples): the samples of a mesh with both axes. A
/// pseudo-axis, so that every other rule still reads one axis per
/// dimension; its part along the expert axis moves to the experts (and
/// back) with all-to-alls inside each data group.
constexpr int kDataExpert = kNumMeshAxes;

/// The mesh axes that `axis` (a mesh axis or kDataExpert) splits over.
inline unsigned axisMask(int axis) {
  if (axis == kReplicated)
    return 0;
  if (axis == kDataExpert)
    return (1u << MeshAxis::Data) | (1u << MeshAxis::Expert);
  return 1u << axis;
}

/// A value's distribution: dimension d holds this rank's slice along mesh
/// axis dims[d] (or all of it), and over the axes of `partial` every rank
/// holds a summand of the value. An axis splits at most one dimension and is
/// never both splitting and partial.
struct Sharding {
  llvm::SmallVector<int> dims;
  unsigned partial = 0;

  static Sharding replicated(int64_t rank) {
    return {llvm::SmallVector<int>(rank, kReplicated), 0};
  }
  /// Mask of the axes that split some dimension.
  unsigned splitMask() const;
  bool operator==(const Sharding &other) const {
    return dims == other.dims && partial == other.partial;
  }
};

unsigned splitMask(llvm::ArrayRef<int> dims);

/// What an op needs of its operands and gives its results: each tensor
/// operand is resharded to `dims` (summed first unless `keepPartial`), and
/// each result is distributed as given; a result of a mean over split
/// dimensions is then multiplied by `resultScale` (local / global count).
struct OperandTarget {
  llvm::SmallVector<int> dims;
  bool keepPartial = false;
};
struct OpPlan {
  llvm::SmallVector<OperandTarget> operands;
  llvm::SmallVector<Sharding> results;
  double resultScale = 1.0;
  /// Attributes the op takes on its per-rank form (ring attention's axes).
  llvm::SmallVector<mlir::NamedAttribute> attributes;
};

/// The sharding facts a rule reads.
struct RuleContext {
  /// Ranks along each mesh axis, and along kDataExpert last.
  llvm::ArrayRef<int64_t> meshSizes;
  /// Current sharding and global type of an operand.
  llvm::function_ref<const Sharding &(mlir::Value)> shardingOf;
  llvm::function_ref<mlir::RankedTensorType(mlir::Value)> globalTypeOf;
  /// Whether fused attention keeps positions split by the sequence axis
  /// (ring attention) rather than gathering them.
  bool ringAttention = true;
};

/// The more distributed of two shardings of the same dimension (samples
/// split over data and expert rather than over data alone: refining a split
/// is a free slice, coarsening it a gather). Two that conflict (split over
/// different axes) give the first: joinAxes(a, b) != joinAxes(b, a).
inline int joinAxes(int a, int b) {
  return a == kReplicated || (a == int(MeshAxis::Data) && b == kDataExpert) ? b
                                                                            : a;
}

/// Drops repeated axes (an axis splits one dimension at most), keeping the
/// first, and axes in `taken`.
void dedupeAxes(llvm::MutableArrayRef<int> dims, unsigned taken = 0);

/// Rules of the image ops (SpatialRules.cpp): convolutions, pooling and
/// batch norm, with their derivatives. `op` must be of the named kind.
OpPlan conv2dPlan(mlir::Operation *op, const RuleContext &ctx);
OpPlan conv2dBackwardInputPlan(mlir::Operation *op, const RuleContext &ctx);
OpPlan conv2dBackwardWeightPlan(mlir::Operation *op, const RuleContext &ctx);
OpPlan pool2dPlan(mlir::Operation *op, const RuleContext &ctx);
OpPlan batchNormPlan(mlir::Operation *op, const RuleContext &ctx);

/// The plan for `op` from its operands' shardings: a precise rule for the
/// nn ops that have one, else every operand gathered and summed and the
/// results replicated (always correct).
OpPlan planOp(mlir::Operation *op, const RuleContext &ctx);

} // namespace metac::partition

#endif // METAC_LIB_PARTITION_SHARDING_H
