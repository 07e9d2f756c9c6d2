//===- Mesh.cpp - the named axes of the device mesh -----------------------===//

#include "metac/Partition/Mesh.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

using namespace metac::partition;

static constexpr llvm::StringLiteral kAxisNames[kNumMeshAxes] = {
    "task", "data", "tensor", "pipeline", "expert", "sequence"};

llvm::StringRef metac::partition::getMeshAxisName(unsigned axis) {
  return axis < kNumMeshAxes ? kAxisNames[axis] : "?";
}

std::string metac::partition::getMeshAxesName(unsigned mask) {
  std::string name;
  for (unsigned axis = 0; axis < kNumMeshAxes; ++axis) {
    if (!(mask & (1u << axis)))
      continue;
    if (!name.empty())
      name += "+";
    name += kAxisNames[axis];
  }
  return name;
}

int64_t MeshShape::numRanks() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

std::string MeshShape::str() const {
  std::string text;
  for (unsigned axis = 0; axis < kNumMeshAxes; ++axis) {
    if (sizes[axis] == 1)
      continue;
    if (!text.empty())
      text += ",";
    text += (kAxisNames[axis] + "=" + llvm::Twine(sizes[axis])).str();
  }
  return text.empty() ? "task=1" : text;
}

llvm::Expected<MeshShape>
metac::partition::parseMeshShape(llvm::StringRef text) {
  auto error = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "invalid mesh '" + text + "': " + why);
  };
  MeshShape mesh;
  bool seen[kNumMeshAxes] = {};
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  for (llvm::StringRef item : items) {
    auto [name, value] = item.trim().split('=');
    name = name.trim();
    value = value.trim();
    const auto *axis = llvm::find(kAxisNames, name);
    if (axis == std::end(kAxisNames))
      return error(
          "unknown axis '" + name +
          "' (expected task, data, tensor, pipeline, expert or sequence)");
    unsigned index = axis - std::begin(kAxisNames);
    if (seen[index])
      return error("axis '" + name + "' given twice");
    seen[index] = true;
    int64_t size;
    if (value.getAsInteger(10, size) || size < 1)
      return error("size of '" + name + "' must be a positive integer, not '" +
                   value + "'");
    mesh.sizes[index] = size;
  }
  return mesh;
}
