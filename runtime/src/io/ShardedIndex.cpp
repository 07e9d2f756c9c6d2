//===- ShardedIndex.cpp - the index of a sharded checkpoint ---------------===//

#include "io/ShardedIndex.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace metart::io;
using nlohmann::json;

namespace {

constexpr const char *kFormat = "metac-sharded-checkpoint";

/// A member that must be an integer in [lo, hi].
bool integer(const json &object, const char *key, int64_t lo, int64_t hi,
             int64_t &out, std::string &error, const std::string &where) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) {
    error = where + " has no integer '" + key + "'";
    return false;
  }
  // Unsigned values above 2^63 do not fit the signed range checked.
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    error = where + "'s '" + key + "' is out of range";
    return false;
  }
  out = it->get<int64_t>();
  if (out < lo || out > hi) {
    error = where + "'s '" + key + "' is " + std::to_string(out) +
            ", outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
            "]";
    return false;
  }
  return true;
}

} // namespace

std::optional<ShardedIndex> metart::io::parseShardedIndex(std::string_view text,
                                                          std::string &error) {
  json root = json::parse(text.begin(), text.end(), nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    error = "not valid JSON";
    return std::nullopt;
  }
  if (!root.is_object() || !root.contains("format") ||
      root["format"] != kFormat || !root.contains("version") ||
      root["version"] != 1) {
    error = "not a metac sharded checkpoint index (version 1)";
    return std::nullopt;
  }
  ShardedIndex index;
  if (!integer(root, "iteration", 0, INT64_MAX, index.iteration, error,
               "the index") ||
      !integer(root, "world_size", 1, int64_t(1) << 24, index.worldSize, error,
               "the index"))
    return std::nullopt;

  auto files = root.find("files");
  if (files == root.end() || !files->is_array() || files->empty()) {
    error = "the index lists no files";
    return std::nullopt;
  }
  for (const json &file : *files) {
    std::string where = "file " + std::to_string(index.files.size());
    int64_t bytes = 0, crc = 0;
    if (!file.is_object() || !file.contains("name") ||
        !file["name"].is_string()) {
      error = where + " has no name";
      return std::nullopt;
    }
    std::string name = file["name"].get<std::string>();
    // A plain name inside the checkpoint's directory.
    if (name.empty() || name == "." || name == ".." ||
        name.find('/') != std::string::npos ||
        name.find('\0') != std::string::npos) {
      error = where + " is named '" + name + "', not a file of the directory";
      return std::nullopt;
    }
    if (!integer(file, "bytes", 0, INT64_MAX, bytes, error, where) ||
        !integer(file, "crc32", 0, UINT32_MAX, crc, error, where))
      return std::nullopt;
    index.files.push_back(
        {name, static_cast<uint64_t>(bytes), static_cast<uint32_t>(crc)});
  }

  auto tensors = root.find("tensors");
  if (tensors == root.end() || !tensors->is_object()) {
    error = "the index has no tensors";
    return std::nullopt;
  }
  for (const auto &[name, entry] : tensors->items()) {
    std::string where = "tensor '" + name + "'";
    ShardedIndex::Tensor tensor;
    if (!entry.is_object() || !entry.contains("dtype") ||
        !entry["dtype"].is_string() || !entry.contains("shape") ||
        !entry["shape"].is_array() || !entry.contains("pieces") ||
        !entry["pieces"].is_array()) {
      error = where + " lacks its dtype, shape or pieces";
      return std::nullopt;
    }
    tensor.dtype = entry["dtype"].get<std::string>();
    for (const json &dim : entry["shape"]) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0 ||
          (dim.is_number_unsigned() &&
           dim.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
        error = where + " has a dimension that is not a size";
        return std::nullopt;
      }
      int64_t size = dim.get<int64_t>();
      if (size > 0 && tensor.elements > INT64_MAX / size) {
        error = where + " has more elements than 64 bits count";
        return std::nullopt;
      }
      tensor.elements *= size;
      tensor.shape.push_back(size);
    }
    for (const json &piece : entry["pieces"]) {
      ShardedIndex::Piece p;
      std::string at = where + "'s piece";
      if (!piece.is_object()) {
        error = at + " is not an object";
        return std::nullopt;
      }
      if (!integer(piece, "file", 0,
                   static_cast<int64_t>(index.files.size()) - 1, p.file, error,
                   at) ||
          !integer(piece, "offset", 0, tensor.elements, p.offset, error, at) ||
          !integer(piece, "count", tensor.elements > 0 ? 1 : 0,
                   tensor.elements - p.offset, p.count, error, at))
        return std::nullopt;
      tensor.pieces.push_back(p);
    }
    index.tensors.emplace(name, std::move(tensor));
  }

  if (root.contains("loss_scale")) {
    const json &scale = root["loss_scale"];
    if (!scale.is_array() || scale.size() != 2 || !scale[0].is_number() ||
        !scale[1].is_number_integer() || !(scale[0].get<double>() > 0) ||
        !std::isfinite(scale[0].get<double>()) || scale[1].get<int64_t>() < 0) {
      error = "the index holds no valid loss scale";
      return std::nullopt;
    }
    index.lossScale = {scale[0].get<double>(), scale[1].get<int64_t>()};
  }
  return index;
}
