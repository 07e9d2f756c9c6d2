//===- RankHeader.cpp - the rank a printed partitioned program is for -----===//

#include "RankHeader.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Partition/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <array>
#include <string>

using namespace mlir;
using namespace metac;

LogicalResult metac::driver::printRankHeader(ModuleOp module, Phase phase,
                                             int64_t rank, raw_ostream &os) {
  if (phase < Phase::Partitioned)
    return emitError(module.getLoc(),
                     "--rank needs --compile-to=partitioned or a later phase");
  partition::MeshShape mesh;
  module.walk([&](meta::TrainOp train) {
    if (meta::PlanAttr plan = train.getPlanAttr())
      mesh.sizes = plan.getMeshSizes();
  });
  if (rank >= mesh.numRanks())
    return emitError(module.getLoc())
           << "--rank " << rank << " is outside the mesh " << mesh.str() << " ("
           << mesh.numRanks() << " ranks)";
  os << "// rank " << rank << " of " << mesh.numRanks() << " (mesh "
     << mesh.str() << "), coordinates";
  int64_t rest = rank;
  std::array<int64_t, partition::kNumMeshAxes> coordinates;
  for (int axis = partition::kNumMeshAxes - 1; axis >= 0; --axis) {
    coordinates[axis] = rest % mesh.sizes[axis];
    rest /= mesh.sizes[axis];
  }
  for (unsigned axis = 0; axis < partition::kNumMeshAxes; ++axis)
    os << (axis ? "," : " ") << partition::getMeshAxisName(axis) << "="
       << coordinates[axis];
  int64_t stage = coordinates[partition::MeshAxis::Pipeline];
  if (mesh.sizes[partition::MeshAxis::Pipeline] == 1) {
    os << ": the same SPMD program as every rank, on its slice of the "
          "batch\n";
    return success();
  }
  // Stages run different programs: keep this rank's.
  std::string suffix = ".stage" + std::to_string(stage);
  for (auto function : llvm::to_vector(module.getOps<func::FuncOp>())) {
    StringRef name = function.getSymName();
    size_t at = name.rfind(".stage");
    if (at != StringRef::npos && name.substr(at) != suffix)
      function.erase();
  }
  os << ": pipeline stage " << stage
     << " (the same program as the ranks of that stage)\n";
  return success();
}
