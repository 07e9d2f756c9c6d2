//===- Pipelines.h - metac's phases ------------------------------*- C++
//-*-===//
//
// The phases of metac, in order. Each is a named pass pipeline; `metac
// --compile-to=PHASE` stops after it and prints its IR.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_PIPELINES_PIPELINES_H
#define METAC_PIPELINES_PIPELINES_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace metac {

enum class Phase {
  AST,
  Meta,
  Expand,
  Batched,
  Autodiff,
  Planned,
  Partitioned,
  Optimized,
  Fused,
  Lowered,
  LLVM,
  Exe,
};

/// Every phase in pipeline order.
llvm::ArrayRef<Phase> allPhases();

/// The phase's name on the command line (`meta`, `partitioned`, ...).
llvm::StringRef getPhaseName(Phase phase);

/// The phase named `name`, if any.
std::optional<Phase> parsePhase(llvm::StringRef name);

/// Whether this build can compile to `phase`.
bool isPhaseImplemented(Phase phase);

/// Choices that change what the phases produce.
struct PipelineOptions {
  /// A mesh overriding the spec's plan (`--mesh task=4,data=2`), or empty.
  std::string mesh;
  /// How a mixed meta-batch splits over the task axis (`--balance`: cost
  /// or count), or empty for the spec's.
  std::string balance;
  /// Largest bucket of merged all-reduces in the optimized phase; 0 turns
  /// bucketing off.
  int64_t bucketBytes = 25 << 20;
  /// How all-reduces move their data: library (MPI's or NCCL's choice),
  /// ring, tree or hierarchical (`metart_all_reduce_algorithm`); empty:
  /// the spec's `parallel { allreduce = ... }`, else library.
  std::string allReduce;
  /// Compression of gradient all-reduces (meta::parseCompression); empty: the
  /// spec's, else none.
  std::string compress;
  /// true: gradient all-reduces start when their gradients are ready and
  /// overlap the rest of the backward pass; false: they do not; empty: the
  /// program's `parallel { overlap = ... }`.
  std::string overlap;
  /// Iterations by which the task axis's sums may lag (bounded staleness);
  /// -1: the program's `parallel { staleness = ... }`, else 0.
  int64_t staleness = -1;
  /// Updates by servers with no bound on staleness (`--staleness=inf`).
  bool asynchronous = false;
  /// Parameter servers beyond the mesh that hold the meta-parameters and
  /// the optimizer state (0: none; -1: the program's `parameter_servers`).
  int64_t parameterServers = -1;
  /// none or optimizer: where the outer optimizer's state lives between
  /// updates (--offload).
  std::string offload;
  /// Task chunks whose meta-gradients accumulate before one reduction and
  /// one outer step (1: none).
  int64_t accumulate = 1;
  /// Whether the parameters the partitioner splits (experts, heads,
  /// columns) stay split between steps: each rank keeps and updates its part
  /// and its optimizer state (`--split-params=on`, the default), or every rank
  /// keeps them whole and gathers their gradients (`off`).
  bool splitParams = true;
  /// ZeRO stage in the optimized phase: 1 shards the outer optimizer's
  /// state over the task and data axes, 2 the gradients too; 0: neither.
  int64_t zero = 0;
  /// Micro-batches of a pipeline (0: the plan's, else 2 x stages).
  int64_t microBatches = 0;
  /// Pipeline schedule overriding the plan's (gpipe, 1f1b, pipedream), or
  /// empty.
  std::string schedule;
  /// Segments of the meta-gradient's forward that its reverse sweep
  /// recomputes (meta-autodiff's `remat`: 0 none, -1 about the square root
  /// of the inner steps).
  int64_t remat = 0;
  /// f32, bf16 or fp16 overriding every training program's precision, or
  /// empty.
  std::string precision;
  /// dynamic or off overriding every training program's loss_scale, or
  /// empty.
  std::string lossScale;
  /// Whether fused attention over positions split by the sequence axis
  /// runs as ring attention (`--ring-attention=on`, the default) or
  /// gathers the keys and values (`off`; also what the CUDA backend needs:
  /// ring attention runs on the CPU backend only).
  bool ringAttention = true;
  /// Whether the fused phase groups elementwise, broadcast and sum chains
  /// into kernels of their own (`--fusion=on`, the default) or leaves every
  /// op a runtime call (`--fusion=off`).
  bool fusion = true;
  /// Whether the groups are also compiled into CUDA kernels
  /// (`--device-kernels=on`; off by default: on an H100 they did not yet
  /// beat the runtime's kernels under CUDA graphs, docs/results.md).
  bool deviceKernels = false;
};

/// Appends the passes that take `meta`-phase IR to `phase` (nothing for
/// `meta` itself beyond verification). Fails for phases not implemented yet.
mlir::LogicalResult buildPipelineTo(mlir::OpPassManager &pm, Phase phase,
                                    const PipelineOptions &options = {});

/// Appends the passes that take `from`-phase IR to `phase` (those of the
/// phases after `from`, up to `phase`): how the planner partitions a copy
/// of the autodiff phase's program for each candidate plan.
mlir::LogicalResult buildPipelineBetween(mlir::OpPassManager &pm, Phase from,
                                         Phase phase,
                                         const PipelineOptions &options = {});

/// Registers one pass pipeline per implemented phase (`metac-to-<phase>`) for
/// `metac-opt --pass-pipeline`.
void registerPhasePipelines();

/// The passes from the fused phase to runtime calls (the lowered phase):
/// shared by the phase pipeline, `metac run` and executables.
void addLoweringPasses(mlir::OpPassManager &pm);

} // namespace metac

#endif // METAC_PIPELINES_PIPELINES_H
