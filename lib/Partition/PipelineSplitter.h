//===- PipelineSplitter.h - one function per pipeline stage -----*- C++ -*-===//
//
// The splitter behind splitPipelineStages (Pipeline.h): Pipeline.cpp assigns
// ops to stages and orders them; PipelineStage.cpp writes each stage's
// function with its sends, receives and, under `pipedream`, the values
// carried to the next call (PipelineCarry.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_PARTITION_PIPELINESPLITTER_H
#define METAC_LIB_PARTITION_PIPELINESPLITTER_H

#include "metac/Dialect/Meta/IR/MetaAttrs.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/SetVector.h"

#include <deque>

namespace metac::partition::pipeline {

/// The step's last arguments: the task batch.
constexpr unsigned kBatchArguments = 4;

/// `parts` (one element type) summed over the pipeline axis by one packed
/// all-reduce: flattened, concatenated, reduced and sliced back.
llvm::SmallVector<mlir::Value>
sumOverPipeline(mlir::OpBuilder &b, mlir::Location loc,
                mlir::FlatSymbolRefAttr grid,
                llvm::ArrayRef<mlir::Value> parts);

/// Micro-batch `mb` of a whole task-batch argument: its tasks
/// [mb * n, (mb + 1) * n), with `type` one micro-batch's.
mlir::Value microBatchOf(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value whole,
                         int64_t mb);

class PipelineSplitter {
public:
  PipelineSplitter(mlir::func::FuncOp function, mlir::shard::GridOp grid,
                   int64_t stages, int64_t micro,
                   const llvm::DenseMap<unsigned, int64_t> &paramStage,
                   bool concat, meta::PipelineSchedule schedule)
      : function(function), grid(grid), stages(stages), micro(micro),
        paramStage(paramStage), concat(concat), schedule(schedule) {}

  /// Assigns every op a stage (and checks the function can be split).
  mlir::LogicalResult analyze() {
    if (mlir::failed(analyzeRegion()))
      return mlir::failure();
    assignStages();
    return mlir::success();
  }
  /// What does not depend on the cut: the per-task region, the globals
  /// and the tail of reductions.
  mlir::LogicalResult analyzeRegion();
  /// analyze() with the region of `other` (the same function): trying a
  /// cut costs only the stage assignment.
  void analyzeLike(const PipelineSplitter &other) {
    region = other.region;
    tail = other.tail;
    globals = other.globals;
    owners = other.owners;
    assignStages();
  }
  /// The largest estimated work of a stage, after analyze().
  double maxStageCost();
  /// Replaces the function by its stage functions, after analyze().
  mlir::LogicalResult build();

private:
  void assignStages();
  mlir::func::FuncOp buildStage(int64_t stage);
  llvm::SmallVector<int64_t> consumersOf(mlir::Value result);
  /// Returns whether it sent anything.
  bool emitSends(mlir::OpBuilder &b, mlir::Operation *op,
                 mlir::IRMapping &mapping);
  void receiveUpTo(mlir::OpBuilder &b, mlir::Value value, int64_t mb);
  void receiveAll(mlir::OpBuilder &b);

  /// `pipedream` (PipelineCarry.cpp): whether the step's ops are split
  /// into early segments (this call's meta-iteration) and late ones (the
  /// previous call's).
  bool carries() const { return !late.empty(); }
  /// Picks the late segments and the values they take from early ones.
  mlir::LogicalResult
  planCarries(const llvm::DenseMap<mlir::Operation *, int64_t> &segment,
              int64_t segments);
  /// The mapping `op` of micro-batch `mb` is cloned with.
  mlir::IRMapping &mappingFor(mlir::Operation *op, int64_t mb);
  /// At the start of stage `stage`'s function: the arguments and global
  /// values the late ops read, as stored by the previous call (weight
  /// stashing), in `lateMappings`.
  void loadStash(mlir::OpBuilder &b, int64_t stage, mlir::Block &entry);
  /// Keeps `value` of micro-batch `mb` (mapped to `now`) for the next
  /// call when this stage's late ops read it.
  void storeIfCarried(mlir::OpBuilder &b, int64_t stage, mlir::Value value,
                      int64_t mb, mlir::Value now);
  /// Maps the early values that late op `op` of `mb` reads to their
  /// loads from the previous call.
  void loadCarried(mlir::OpBuilder &b, mlir::Operation *op, int64_t mb);
  /// The value of the early `value` of `mb` as the previous call stored it.
  mlir::Value loadCarriedValue(mlir::OpBuilder &b, mlir::Value value,
                               int64_t mb);
  /// Gates the outer update of the stage's step with a flag that is 0 in
  /// the first call (its late ops had nothing to finish).
  void gateFirstUpdate(mlir::OpBuilder &b, mlir::func::FuncOp stageFunction);
  int64_t siteOf(mlir::Value value, int64_t mb);

  mlir::func::FuncOp function;
  mlir::shard::GridOp grid;
  int64_t stages, micro;
  const llvm::DenseMap<unsigned, int64_t> &paramStage;
  bool concat;
  meta::PipelineSchedule schedule;

  llvm::SetVector<mlir::Operation *> region, tail;
  llvm::SmallVector<mlir::Operation *> globals;
  llvm::SmallVector<mlir::Operation *> owners;
  llvm::DenseMap<mlir::Operation *, int64_t> stageOf;
  /// The order every stage runs (op, micro-batch) pairs in.
  llvm::SmallVector<std::pair<mlir::Operation *, int64_t>> order;
  /// A value of one micro-batch sent to this stage by `producer`.
  struct Transfer {
    int64_t producer;
    mlir::Value value;
    int64_t mb;
  };
  /// The transfers this stage still has to receive, in the order of the
  /// schedule (so in each producer's send order).
  std::deque<Transfer> incoming;
  /// The stage being built.
  int64_t current = 0;
  /// Per micro-batch: how the ops of the stage being built are cloned.
  llvm::SmallVector<mlir::IRMapping> mappings;

  // `pipedream` only.
  /// The region's ops of the late segments.
  llvm::DenseSet<mlir::Operation *> late;
  /// Per stage, the early values its late ops (or its reductions of late
  /// micro-batch results) read.
  llvm::DenseMap<int64_t, llvm::SetVector<mlir::Value>> carriedTo;
  /// Per micro-batch: how the late ops are cloned.
  llvm::SmallVector<mlir::IRMapping> lateMappings;
  /// The carry sites of the stage being built.
  llvm::DenseMap<std::pair<mlir::Value, int64_t>, int64_t> sites;
};

} // namespace metac::partition::pipeline

#endif // METAC_LIB_PARTITION_PIPELINESPLITTER_H
