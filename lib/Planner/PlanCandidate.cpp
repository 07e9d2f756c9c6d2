//===- PlanCandidate.cpp - one plan the planner considers ----------------===//

#include "metac/Planner/PlanCandidate.h"

#include "llvm/Support/FormatVariadic.h"

using namespace metac;
using namespace metac::planner;
using partition::MeshAxis;

std::string PlanCandidate::describe() const {
  std::string text = mesh.str();
  if (mesh.sizes[MeshAxis::Pipeline] > 1)
    text += llvm::formatv(" ({0} micro-batches, {1})", microBatches, schedule)
                .str();
  if (!balance.empty())
    text += " (balance " + balance + ")";
  if (!offload.empty())
    text += " (offload " + offload + ")";
  return text;
}
