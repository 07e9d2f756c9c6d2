//===- Pipelines.cpp - metac's phases -------------------------------------===//

#include "metac/Pipelines/Pipelines.h"

#include "metac/Conversion/Passes.h"
#include "metac/Dialect/Meta/Transforms/Passes.h"
#include "metac/Partition/Mesh.h"
#include "metac/Partition/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace metac;

namespace {

struct PhaseInfo {
  metac::Phase phase;
  llvm::StringLiteral name;
  bool implemented;
};

constexpr PhaseInfo kPhases[] = {
    {metac::Phase::AST, "ast", true},
    {metac::Phase::Meta, "meta", true},
    {metac::Phase::Expand, "expand", true},
    {metac::Phase::Batched, "batched", true},
    {metac::Phase::Autodiff, "autodiff", true},
    {metac::Phase::Planned, "planned", true},
    {metac::Phase::Partitioned, "partitioned", true},
    {metac::Phase::Optimized, "optimized", true},
    {metac::Phase::Fused, "fused", true},
    {metac::Phase::Lowered, "lowered", true},
    {metac::Phase::LLVM, "llvm", true},
    {metac::Phase::Exe, "exe", true},
};

const PhaseInfo &info(metac::Phase phase) {
  return kPhases[static_cast<size_t>(phase)];
}

} // namespace

llvm::ArrayRef<metac::Phase> metac::allPhases() {
  static const Phase phases[] = {
      Phase::AST,      Phase::Meta,    Phase::Expand,      Phase::Batched,
      Phase::Autodiff, Phase::Planned, Phase::Partitioned, Phase::Optimized,
      Phase::Fused,    Phase::Lowered, Phase::LLVM,        Phase::Exe};
  return phases;
}

llvm::StringRef metac::getPhaseName(Phase phase) { return info(phase).name; }

std::optional<metac::Phase> metac::parsePhase(llvm::StringRef name) {
  for (const PhaseInfo &p : kPhases)
    if (p.name == name)
      return p.phase;
  return std::nullopt;
}

bool metac::isPhaseImplemented(Phase phase) { return info(phase).implemented; }

void metac::addLoweringPasses(OpPassManager &pm) {
  // The fused phase's groups become kernels, then everything runtime calls.
  pm.addPass(createGenerateFusedKernels());
  // Again after the optimized phase's run: fusion moves ops.
  pm.addPass(partition::createMetaCarryBuffers());
  pm.addPass(createConvertNNToRuntime());
}

LogicalResult metac::buildPipelineTo(OpPassManager &pm, Phase phase,
                                     const PipelineOptions &options) {
  return buildPipelineBetween(pm, Phase::Meta, phase, options);
}

LogicalResult metac::buildPipelineBetween(OpPassManager &pm, Phase from,
                                          Phase phase,
                                          const PipelineOptions &options) {
  if (!isPhaseImplemented(phase))
    return failure();
  // Each phase's passes run when `from` is before it and `phase` reaches it.
  auto after = [&](Phase p) { return from < p && phase >= p; };
  // The `meta` phase is MLIRGen's output: verification (which the pass
  // manager runs after every pipeline) is all it needs.
  if (after(Phase::Expand)) {
    meta::MetaMixedPrecisionOptions mixed;
    mixed.precision = options.precision;
    mixed.lossScale = options.lossScale;
    pm.addPass(meta::createMetaMixedPrecision(mixed));
    meta::MetaExpandOptions expand;
    if (!options.mesh.empty()) {
      if (auto parsed = partition::parseMeshShape(options.mesh))
        expand.taskParts = parsed->sizes[partition::MeshAxis::Task];
      else
        llvm::consumeError(parsed.takeError()); // reported by meta-plan
    }
    expand.balance = options.balance;
    pm.addPass(meta::createMetaExpand(expand));
    pm.addPass(meta::createMetaUnrollAdapt());
  }
  if (after(Phase::Batched)) {
    pm.addPass(meta::createMetaBatchTasks());
    pm.addPass(createCSEPass());
  }
  if (after(Phase::Autodiff)) {
    meta::MetaAutodiffOptions autodiff;
    autodiff.remat = options.remat;
    pm.addPass(meta::createMetaAutodiff(autodiff));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  // On one rank (no plan, no --mesh) planning and partitioning change
  // nothing.
  if (after(Phase::Planned)) {
    partition::MetaPlanOptions plan;
    plan.mesh = options.mesh;
    plan.microBatches = options.microBatches;
    plan.schedule = options.schedule;
    pm.addPass(partition::createMetaPlan(plan));
  }
  if (after(Phase::Partitioned)) {
    partition::MetaPartitionOptions partitioning;
    partitioning.ringAttention = options.ringAttention;
    pm.addPass(partition::createMetaPartition(partitioning));
    // Per function: a pipeline's stages are simplified in parallel.
    OpPassManager &perFunction = pm.nest<func::FuncOp>();
    perFunction.addPass(createCanonicalizerPass());
    perFunction.addPass(createCSEPass());
  }
  if (after(Phase::Optimized) && options.accumulate > 1) {
    partition::MetaAccumulateGradientsOptions accumulate;
    accumulate.steps = options.accumulate;
    pm.addPass(partition::createMetaAccumulateGradients(accumulate));
  }
  // Before ZeRO, which shards the state of the parameters held whole.
  if (after(Phase::Optimized) && options.splitParams) {
    partition::MetaKeepParamsSplitOptions keep;
    keep.servers = options.parameterServers;
    // A stage's own parameters first: the split is decided where they are.
    pm.addPass(partition::createMetaKeepStageParams());
    pm.addPass(partition::createMetaKeepParamsSplit(keep));
  }
  // Before bucketing: ZeRO-2 replaces the gradients' own all-reduces.
  if (after(Phase::Optimized) && options.zero > 0) {
    partition::MetaShardOptimizerStateOptions zero;
    zero.stage = options.zero;
    pm.addPass(partition::createMetaShardOptimizerState(zero));
  }
  // After ZeRO (which it refuses), before the all-reduces are chosen and
  // bucketed: the outer update's sums leave the step.
  if (after(Phase::Optimized)) {
    partition::MetaParameterServersOptions servers;
    servers.servers = options.parameterServers;
    servers.staleness = options.staleness;
    servers.asynchronous = options.asynchronous;
    pm.addPass(partition::createMetaParameterServers(servers));
    partition::MetaOffloadOptions offload;
    offload.offload = options.offload;
    pm.addPass(partition::createMetaOffload(offload));
  }
  // Before bucketing, so that buckets follow the order in which gradients
  // become ready and carry the choices of their members.
  if (after(Phase::Optimized)) {
    partition::MetaSelectAllReduceOptions select;
    select.algorithm = options.allReduce;
    select.compress = options.compress;
    select.staleness = options.staleness;
    pm.addPass(partition::createMetaSelectAllReduce(select));
    partition::MetaHoistCollectivesOptions hoist;
    hoist.overlap = options.overlap;
    pm.addPass(partition::createMetaHoistCollectives(hoist));
  }
  if (after(Phase::Optimized) && options.bucketBytes > 0) {
    partition::MetaBucketCollectivesOptions bucket;
    bucket.bucketBytes = options.bucketBytes;
    pm.addPass(partition::createMetaBucketCollectives(bucket));
  }
  if (after(Phase::Optimized)) {
    partition::MetaOverlapCollectivesOptions overlap;
    overlap.overlap = options.overlap;
    pm.addPass(partition::createMetaOverlapCollectives(overlap));
  }
  if (after(Phase::Optimized)) {
    pm.addPass(createFoldNNTransposes());
    pm.addPass(partition::createMetaCarryBuffers());
  }
  if (after(Phase::Fused) && options.fusion)
    pm.addPass(createFuseNNElementwise());
  if (after(Phase::Lowered)) {
    addLoweringPasses(pm);
  }
  // `llvm` is the lowered module translated to LLVM IR (by the driver).
  return success();
}

void metac::registerPhasePipelines() {
  // One pipeline per implemented phase after `meta`, from meta-phase IR.
  for (const PhaseInfo &p : kPhases) {
    if (!p.implemented || p.phase == Phase::AST || p.phase == Phase::LLVM ||
        p.phase == Phase::Exe)
      continue;
    Phase phase = p.phase;
    PassPipelineRegistration<>(
        ("metac-to-" + p.name).str(),
        ("Run metac's phases from meta-phase IR to '" + p.name + "'").str(),
        [phase](OpPassManager &pm) { (void)buildPipelineTo(pm, phase); });
  }
}
