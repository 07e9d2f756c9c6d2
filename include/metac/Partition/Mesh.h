//===- Mesh.h - the named axes of the device mesh ----------------*- C++
//-*-===//
//
// metac's mesh has six named axes, in this order: `task` (tasks of a
// meta-batch), `data` (samples inside a task), `tensor` (hidden dimensions of
// weights), `pipeline` (layer stages), `expert` (samples, like `data`, and
// the experts of mixture-of-experts layers, which trade tokens all-to-all)
// and `sequence` (the positions of each sequence, gathered where a layer
// needs them all). In IR it is an upstream `shard.grid` of rank six whose axis
// i is the axis named here; ranks are laid out row-major over it, as the
// runtime does
// (`METART_MESH_AXES` there).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_PARTITION_MESH_H
#define METAC_PARTITION_MESH_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <string>

namespace metac::partition {

enum MeshAxis : unsigned {
  Task = 0,
  Data = 1,
  Tensor = 2,
  Pipeline = 3,
  Expert = 4,
  Sequence = 5
};
constexpr unsigned kNumMeshAxes = 6;

/// `task`, `data`, `tensor`, `pipeline`, `expert` or `sequence`.
llvm::StringRef getMeshAxisName(unsigned axis);

/// "task", "task+data", ... for a mask whose bit i is axis i.
std::string getMeshAxesName(unsigned mask);

struct MeshShape {
  std::array<int64_t, kNumMeshAxes> sizes{1, 1, 1, 1, 1, 1};

  int64_t numRanks() const;
  bool isSingleRank() const { return numRanks() == 1; }
  /// "task=4,data=2" (axes of size 1 left out; "task=1" for one rank).
  std::string str() const;
};

/// Parses `--mesh` syntax: comma-separated `axis=size` with axis one of the
/// mesh's names, each at most once, sizes >= 1.
llvm::Expected<MeshShape> parseMeshShape(llvm::StringRef text);

} // namespace metac::partition

#endif // METAC_PARTITION_MESH_H
