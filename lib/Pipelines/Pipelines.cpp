//===- Pipelines.cpp - metac's phases -------------------------------------===//

#include "metac/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

struct PhaseInfo {
  metac::Phase phase;
  llvm::StringLiteral name;
  bool implemented;
};

constexpr PhaseInfo kPhases[] = {
    {metac::Phase::AST, "ast", true},
    {metac::Phase::Meta, "meta", true},
    {metac::Phase::Expand, "expand", false},
    {metac::Phase::Batched, "batched", false},
    {metac::Phase::Autodiff, "autodiff", false},
    {metac::Phase::Planned, "planned", false},
    {metac::Phase::Partitioned, "partitioned", false},
    {metac::Phase::Optimized, "optimized", false},
    {metac::Phase::Lowered, "lowered", false},
    {metac::Phase::LLVM, "llvm", false},
    {metac::Phase::Exe, "exe", false},
};

const PhaseInfo &info(metac::Phase phase) {
  return kPhases[static_cast<size_t>(phase)];
}

} // namespace

llvm::ArrayRef<metac::Phase> metac::allPhases() {
  static const Phase phases[] = {
      Phase::AST,         Phase::Meta,      Phase::Expand,  Phase::Batched,
      Phase::Autodiff,    Phase::Planned,   Phase::Partitioned,
      Phase::Optimized,   Phase::Lowered,   Phase::LLVM,    Phase::Exe};
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

LogicalResult metac::buildPipelineTo(OpPassManager &pm, Phase phase) {
  if (!isPhaseImplemented(phase))
    return failure();
  // The `meta` phase is MLIRGen's output: verification (which the pass
  // manager runs after every pipeline) is all it needs. Later phases append
  // their pass pipelines here.
  (void)pm;
  return success();
}

void metac::registerPhasePipelines() {
  PassPipelineRegistration<>(
      "metac-to-meta", "Verify meta-phase IR (the output of metac's MLIRGen)",
      [](OpPassManager &pm) { (void)buildPipelineTo(pm, Phase::Meta); });
}
