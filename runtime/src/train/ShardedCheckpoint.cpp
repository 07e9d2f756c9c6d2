//===- ShardedCheckpoint.cpp - checkpoints every rank writes
//---------------===//
//
// With --checkpoint-format=sharded (the default when the optimizer state
// is sharded, ZeRO), no rank gathers anything: each writes the pieces it
// holds into its own safetensors file, in parallel, and one index says
// where every tensor's pieces are, as ranges of its flattened elements:
//
//   DIR/checkpoint-<iteration>.sharded/rank-<r>.safetensors
//   DIR/checkpoint-<iteration>.sharded/index.json
//   DIR/checkpoint.latest                 the directory's name
//
// A replicated tensor (a parameter, an unsharded state buffer) is written
// whole, once, by the rank its position picks round-robin; a ZeRO part by
// the first rank of its group that holds it. The index (written by rank
// 0 once every file is complete: sizes and CRC-32s of the files, global
// shapes and types, the mesh and the ZeRO split, the iteration and the
// loss scale) commits the directory, and `checkpoint.latest`, replaced
// atomically, points to it; older directories are removed only then. A
// crash at any point leaves the previous checkpoint whole. Loading, on any
// mesh, reads of each tensor the range this rank needs (all of it, or its
// new ZeRO part) from the pieces that overlap it, checking each file it
// opens against the index. The files must be on a file system every rank
// sees (rank 0 checks them).
//
//===----------------------------------------------------------------------===//

#include "../comm/Servers.h"
#include "Trainer.h"
#include "io/AtomicFile.h"
#include "io/Safetensors.h"
#include "io/ShardedIndex.h"
#include "metart/comm.h"
#include "metart/data.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>

namespace metart::train {

namespace fs = std::filesystem;

namespace {

constexpr const char *kFormat = "metac-sharded-checkpoint";
constexpr const char *kLatest = "checkpoint.latest";

const char *dtypeName(int32_t dtype) {
  const char *name = io::safetensorsDtypeName(dtype);
  return name ? name : "?";
}

std::string rankFile(int64_t rank) {
  char name[64];
  std::snprintf(name, sizeof(name), "rank-%05lld.safetensors",
                static_cast<long long>(rank));
  return name;
}

/// The size and CRC-32 of a file, or false when it cannot be read.
bool checksum(const fs::path &path, uint64_t &bytes, uint32_t &crc) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  uLong sum = crc32(0L, Z_NULL, 0);
  bytes = 0;
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    std::streamsize got = in.gcount();
    if (got <= 0)
      break;
    sum = crc32(sum, reinterpret_cast<const Bytef *>(buffer.data()),
                static_cast<uInt>(got));
    bytes += static_cast<uint64_t>(got);
  }
  crc = static_cast<uint32_t>(sum);
  return !in.bad();
}

/// The name of the piece of `tensor` that starts at element `offset`.
std::string pieceName(const std::string &tensor, int64_t offset) {
  return tensor + "@" + std::to_string(offset);
}

std::string shapeText(int32_t dtype, const std::vector<int64_t> &shape) {
  std::string text = std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? "," : "") + std::to_string(shape[i]);
  return text + "]";
}

} // namespace

bool Trainer::shardedCheckpoints() const {
  if (options.checkpoint_format == METART_CHECKPOINT_SHARDED)
    return true;
  if (options.checkpoint_format == METART_CHECKPOINT_GATHERED)
    return false;
  return program.zero_parts > 1;
}

metart_status Trainer::saveCheckpoint(int64_t iteration) {
  auto began = std::chrono::steady_clock::now();
  std::string where;
  // Parameter servers: the first worker takes their parameters and state
  // of this update (the others' parameters may lag under staleness).
  if (program.servers.count > 0 && sharding.writer) {
    std::vector<const metart_tensor *> p, s;
    for (const DeviceTensor &t : params)
      p.push_back(&t.descriptor);
    for (const DeviceTensor &t : state)
      s.push_back(&t.descriptor);
    std::string why;
    if (metart_status status = comm::servers::fetchState(
            context, p.data(), static_cast<int64_t>(p.size()), s.data(),
            static_cast<int64_t>(s.size()), iteration, why))
      return fail(status, "collecting the servers' state: %s", why.c_str());
  }
  if (shardedCheckpoints()) {
    if (metart_status s = saveSharded(iteration, where))
      return s;
  } else {
    where = std::string(options.checkpoint_dir) + "/checkpoint.safetensors";
    if (metart_status s = saveParams(where.c_str(), true, iteration))
      return s;
  }
  lastCheckpoint = where;
  lastCheckpointDir = options.checkpoint_dir;
  lastCheckpointIteration = iteration;
  // No rank goes past a checkpoint before it is complete.
  metart_status status = barrier();
  ++checkpointWrites;
  checkpointSeconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began)
          .count();
  return status;
}

metart_status Trainer::saveSharded(int64_t iteration, std::string &where) {
  int64_t rank = metart_world_rank(), world = metart_world_size();
  fs::path dir = options.checkpoint_dir;
  std::string name = "checkpoint-" + std::to_string(iteration) + ".sharded";
  // The committed checkpoint is never written over: when the pointer names
  // this directory already (a new run in an old directory), the pieces go
  // to another. Every rank reads the pointer before rank 0 may change it.
  {
    std::ifstream pointer(dir / kLatest);
    std::string current;
    if (pointer && std::getline(pointer, current) && current == name)
      name = "checkpoint-" + std::to_string(iteration) + "b.sharded";
  }
  fs::path shards = dir / name;
  {
    // What a crashed write left under this name is not a checkpoint.
    std::error_code stale;
    if (rank == 0 && fs::exists(shards / "index.json", stale))
      fs::remove(shards / "index.json", stale);
  }
  where = shards.string();
  std::error_code ec;
  fs::create_directories(shards, ec);
  if (ec)
    return fail(METART_ERROR_IO, "cannot create '%s': %s",
                shards.string().c_str(), ec.message().c_str());

  // Which tensors and ranges this rank writes.
  struct Piece {
    std::string name;
    const DeviceTensor *tensor;
    int64_t offset, count;
  };
  std::vector<Piece> pieces;
  std::vector<std::string> names;
  std::vector<DeviceTensor> wholes;
  for (size_t t = 0; t < params.size() + state.size(); ++t) {
    names.push_back(tensorName(t));
    wholes.push_back(heldElsewhere(t) ? wholeOf(t) : held(t));
  }
  // A part that is not one stretch of its whole (a split of a later
  // dimension) is gathered and written whole, as a whole tensor is (on
  // the pipeline stage that holds it, where one does).
  GatheredTensors gathered(context);
  std::vector<const DeviceTensor *> sources;
  for (size_t t = 0; t < names.size(); ++t) {
    sources.push_back(&held(t));
    if (isPart(t) && !contiguousPart(t) && heldHere(t)) {
      DeviceTensor &whole = gathered.tensors.emplace_back();
      if (metart_status s = gatherParts(t, holdingOf(t), whole))
        return s;
      sources.back() = &whole;
    }
  }
  auto piecewise = [&](size_t t) { return isPart(t) && contiguousPart(t); };
  // The axes over which tensor `t` is not copied: those of its parts, and
  // the pipeline's where one stage holds it.
  auto splitMask = [&](size_t t) {
    Holding holding = holdingOf(t);
    return holding.mask |
           (holding.stage >= 0 ? int32_t(1) << METART_AXIS_PIPELINE : 0);
  };
  // A part is written by the first rank of the group of the axes it is not
  // split over (the others hold copies).
  std::map<int32_t, int64_t> copyPositions;
  auto copyPosition = [&](int32_t mask, int64_t &position) -> metart_status {
    auto [it, added] = copyPositions.try_emplace(mask, 0);
    int64_t copies = 1;
    if (added)
      if (metart_status s = metart_comm_group(context, METART_ALL_AXES & ~mask,
                                              &it->second, &copies))
        return fail(s, "%s", metart_context_last_error(context));
    position = it->second;
    return METART_OK;
  };
  for (size_t t = 0; t < names.size(); ++t) {
    if (!heldHere(t))
      continue; // its pipeline stage writes it
    if (piecewise(t)) {
      std::vector<std::pair<int64_t, int64_t>> ranges;
      int64_t position = 0;
      if (metart_status s = partRanges(t, ranges))
        return s;
      if (metart_status s = copyPosition(splitMask(t), position))
        return s;
      if (position == 0)
        pieces.push_back(
            {names[t], &held(t), ranges.front().first, partElements(t)});
      continue;
    }
    // A whole tensor: the ranks that hold it take turns.
    int64_t position = rank, holders = world;
    if (holdingOf(t).stage >= 0)
      if (metart_status s = metart_comm_group(
              context, METART_ALL_AXES & ~(1 << METART_AXIS_PIPELINE),
              &position, &holders))
        return fail(s, "%s", metart_context_last_error(context));
    if (static_cast<int64_t>(t) % holders == position)
      pieces.push_back({names[t], sources[t], 0, sources[t]->numElements()});
  }
  std::vector<std::vector<char>> host(pieces.size());
  std::vector<metart_named_tensor> entries;
  for (size_t p = 0; p < pieces.size(); ++p) {
    host[p].resize(pieces[p].tensor->bytes);
    if (metart_status s = metart_copy_to_host(context, host[p].data(),
                                              pieces[p].tensor->descriptor.data,
                                              pieces[p].tensor->bytes))
      return fail(s, "%s", metart_context_last_error(context));
  }
  // Each piece is named by its tensor and its first element.
  std::vector<std::string> pieceNames;
  for (const Piece &piece : pieces)
    pieceNames.push_back(pieceName(piece.name, piece.offset));
  for (size_t p = 0; p < pieces.size(); ++p)
    entries.push_back({pieceNames[p].c_str(), pieces[p].tensor->dtype, 1,
                       &pieces[p].count, host[p].data()});
  char message[512] = "";
  if (metart_status s = metart_safetensors_write(
          (shards / rankFile(rank)).string().c_str(), entries.data(),
          static_cast<int64_t>(entries.size()), message, sizeof(message)))
    return fail(s, "%s", message);

  // Every piece's place, gathered from the ranks' pieces: each rank knows
  // the layout (it is a function of the mesh), so rank 0 recomputes it.
  if (metart_status s = barrier())
    return s;
  if (rank != 0)
    return METART_OK;
  nlohmann::ordered_json index;
  index["format"] = kFormat;
  index["version"] = 1;
  index["iteration"] = iteration;
  index["world_size"] = world;
  index["mesh"] = nlohmann::json::array();
  for (int axis = 0; axis < METART_NUM_AXES; ++axis)
    index["mesh"].push_back(program.mesh[axis] > 0 ? program.mesh[axis] : 1);
  index["zero_parts"] = program.zero_parts > 1 ? program.zero_parts : 1;
  if (program.loss_scaling)
    index["loss_scale"] = {scaler.scale(), scaler.healthyInRow()};
  nlohmann::ordered_json files = nlohmann::json::array();
  for (int64_t r = 0; r < world; ++r) {
    uint64_t bytes = 0;
    uint32_t crc = 0;
    if (!checksum(shards / rankFile(r), bytes, crc))
      return fail(METART_ERROR_IO,
                  "rank %lld's checkpoint file '%s' is missing (sharded "
                  "checkpoints need a file system every rank shares)",
                  static_cast<long long>(r),
                  (shards / rankFile(r)).string().c_str());
    files.push_back({{"name", rankFile(r)}, {"bytes", bytes}, {"crc32", crc}});
  }
  index["files"] = files;
  // The pieces of each tensor, found in the ranks' files by their names
  // (a whole tensor starts at 0, part j of a ZeRO split at j times the
  // part's size).
  nlohmann::ordered_json tensors = nlohmann::json::object();
  std::vector<metart_safetensors *> written(world, nullptr);
  struct Closer {
    std::vector<metart_safetensors *> &files;
    ~Closer() {
      for (metart_safetensors *file : files)
        if (file)
          metart_safetensors_close(file);
    }
  } closer{written};
  for (int64_t r = 0; r < world; ++r)
    if (metart_status s =
            metart_safetensors_open((shards / rankFile(r)).string().c_str(),
                                    &written[r], message, sizeof(message)))
      return fail(s, "%s", message);
  for (size_t t = 0; t < names.size(); ++t) {
    const DeviceTensor &whole = wholes[t];
    int64_t parts = piecewise(t) ? holdingOf(t).parts : 1;
    int64_t count = whole.numElements() / parts;
    nlohmann::ordered_json list = nlohmann::json::array();
    for (int64_t j = 0; j < parts; ++j)
      for (int64_t r = 0; r < world; ++r) {
        int32_t dtype = 0, pieceRank = 0;
        const int64_t *shape = nullptr;
        const void *data = nullptr;
        if (metart_safetensors_find(written[r],
                                    pieceName(names[t], j * count).c_str(),
                                    &dtype, &pieceRank, &shape, &data))
          continue;
        list.push_back({{"file", r}, {"offset", j * count}, {"count", count}});
        break;
      }
    if (static_cast<int64_t>(list.size()) != parts)
      return fail(METART_ERROR_IO,
                  "the ranks wrote %zu of the %lld pieces of '%s'", list.size(),
                  static_cast<long long>(parts), names[t].c_str());
    nlohmann::ordered_json entry;
    entry["dtype"] = dtypeName(whole.dtype);
    entry["shape"] = whole.shape;
    entry["pieces"] = list;
    tensors[names[t]] = entry;
  }
  index["tensors"] = tensors;
  std::string text = index.dump(1), why;
  if (!io::writeFileAtomically((shards / "index.json").string(),
                               {{text.data(), text.size()}}, why))
    return fail(METART_ERROR_IO, "%s", why.c_str());
  // The commit: the pointer names the new directory.
  std::string line = name + "\n";
  if (!io::writeFileAtomically((dir / kLatest).string(),
                               {{line.data(), line.size()}}, why))
    return fail(METART_ERROR_IO, "%s", why.c_str());
  for (const auto &entry : fs::directory_iterator(dir, ec)) {
    std::string other = entry.path().filename().string();
    if (other != name && other.rfind("checkpoint-", 0) == 0 &&
        entry.path().extension() == ".sharded")
      fs::remove_all(entry.path(), ec);
  }
  return METART_OK;
}

metart_status Trainer::loadSharded(const std::string &dir, int64_t *iteration) {
  fs::path latest = fs::path(dir) / kLatest;
  std::ifstream pointer(latest);
  std::string name;
  if (!pointer || !std::getline(pointer, name) || name.empty() ||
      name.find('/') != std::string::npos || name == "." || name == "..")
    return fail(METART_ERROR_IO, "'%s' does not name a checkpoint directory",
                latest.string().c_str());
  fs::path shards = fs::path(dir) / name;
  fs::path indexPath = shards / "index.json";
  std::ifstream indexFile(indexPath, std::ios::binary);
  if (!indexFile)
    return fail(METART_ERROR_IO,
                "the sharded checkpoint '%s' has no index (an interrupted "
                "write is never named by '%s')",
                shards.string().c_str(), latest.string().c_str());
  std::string text((std::istreambuf_iterator<char>(indexFile)),
                   std::istreambuf_iterator<char>());
  std::string why;
  std::optional<io::ShardedIndex> parsed = io::parseShardedIndex(text, why);
  std::string where = indexPath.string();
  if (!parsed)
    return fail(METART_ERROR_IO, "'%s' is not a valid checkpoint index: %s",
                where.c_str(), why.c_str());
  const io::ShardedIndex &index = *parsed;

  // Files checked on first use against the index's size and CRC-32.
  struct Open {
    metart_safetensors *file = nullptr;
    ~Open() {
      if (file)
        metart_safetensors_close(file);
    }
  };
  std::map<int64_t, std::unique_ptr<Open>> opened;
  auto fileOf = [&](int64_t f, metart_safetensors *&out) -> metart_status {
    auto &slot = opened[f];
    if (!slot) {
      slot = std::make_unique<Open>();
      const io::ShardedIndex::File &listed = index.files[f];
      fs::path path = shards / listed.name;
      uint64_t bytes = 0;
      uint32_t crc = 0;
      if (!checksum(path, bytes, crc))
        return fail(METART_ERROR_IO, "cannot read '%s'", path.string().c_str());
      if (bytes != listed.bytes || crc != listed.crc32)
        return fail(
            METART_ERROR_IO,
            "'%s' is corrupt: %llu bytes with CRC-32 %08x, the "
            "index says %llu bytes with %08x",
            path.string().c_str(), static_cast<unsigned long long>(bytes), crc,
            static_cast<unsigned long long>(listed.bytes), listed.crc32);
      char message[512] = "";
      if (metart_status s = metart_safetensors_open(
              path.string().c_str(), &slot->file, message, sizeof(message)))
        return fail(s, "%s", message);
    }
    out = slot->file;
    return METART_OK;
  };
  // Elements [lo, lo + count) of tensor `tensorName` (the model's type and
  // shape `whole`) into `t` from the pieces that overlap them.
  auto load = [&](const std::string &tensorName, DeviceTensor &t,
                  const DeviceTensor &whole,
                  const std::vector<std::pair<int64_t, int64_t>> &ranges)
      -> metart_status {
    auto found = index.tensors.find(tensorName);
    if (found == index.tensors.end())
      return fail(METART_ERROR_IO,
                  "the checkpoint '%s' has no tensor '%s' (the model's is "
                  "%s): it was written for another spec",
                  shards.string().c_str(), tensorName.c_str(),
                  shapeText(whole.dtype, whole.shape).c_str());
    const io::ShardedIndex::Tensor &entry = found->second;
    if (entry.dtype != dtypeName(whole.dtype) || entry.shape != whole.shape) {
      std::string saved = entry.dtype + nlohmann::json(entry.shape).dump();
      return fail(METART_ERROR_IO,
                  "tensor '%s' is %s in the checkpoint '%s', the model's "
                  "is %s: it was written for another spec",
                  tensorName.c_str(), saved.c_str(), shards.string().c_str(),
                  shapeText(whole.dtype, whole.shape).c_str());
    }
    size_t element = elementSize(t.dtype);
    std::vector<char> host(t.bytes);
    // Each stretch of the whole that `t` holds, from the pieces that
    // overlap it, in turn.
    int64_t at = 0;
    for (auto [lo, count] : ranges) {
      int64_t hi = lo + count, covered = 0;
      for (const io::ShardedIndex::Piece &piece : entry.pieces) {
        int64_t from = std::max(lo, piece.offset),
                to = std::min(hi, piece.offset + piece.count);
        if (from >= to)
          continue;
        metart_safetensors *file = nullptr;
        if (metart_status s = fileOf(piece.file, file))
          return s;
        int32_t fileType = 0, fileRank = 0;
        const int64_t *fileShape = nullptr;
        const void *data = nullptr;
        if (metart_safetensors_find(file,
                                    pieceName(tensorName, piece.offset).c_str(),
                                    &fileType, &fileRank, &fileShape, &data) ||
            fileType != t.dtype || fileRank != 1 || fileShape[0] != piece.count)
          return fail(METART_ERROR_IO,
                      "the checkpoint '%s' lacks its piece of '%s' at "
                      "element %lld",
                      shards.string().c_str(), tensorName.c_str(),
                      static_cast<long long>(piece.offset));
        std::memcpy(host.data() + (at + from - lo) * element,
                    static_cast<const char *>(data) +
                        (from - piece.offset) * element,
                    static_cast<size_t>(to - from) * element);
        covered += to - from;
      }
      if (covered != count)
        return fail(METART_ERROR_IO,
                    "the checkpoint '%s' covers %lld of the %lld elements "
                    "from %lld of '%s'",
                    shards.string().c_str(), static_cast<long long>(covered),
                    static_cast<long long>(count), static_cast<long long>(lo),
                    tensorName.c_str());
      at += count;
    }
    if (tensorName == "optimizer.step") {
      int64_t steps = 0;
      std::memcpy(&steps, host.data(), sizeof(steps));
      if (steps < 0)
        return fail(METART_ERROR_IO,
                    "tensor 'optimizer.step' in '%s' is negative (%lld)",
                    shards.string().c_str(), static_cast<long long>(steps));
    }
    if (metart_status s = metart_copy_to_device(context, t.descriptor.data,
                                                host.data(), t.bytes))
      return fail(s, "%s", metart_context_last_error(context));
    return METART_OK;
  };
  for (size_t t = 0; t < params.size() + state.size(); ++t) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    if (metart_status s = partRanges(t, ranges))
      return s;
    if (metart_status s = load(tensorName(t), held(t),
                               heldElsewhere(t) ? wholeOf(t) : held(t), ranges))
      return s;
  }
  if (program.loss_scaling && index.lossScale) {
    scaler.restore(index.lossScale->first, index.lossScale->second);
    if (metart_status s = writeScale())
      return s;
  }
  *iteration = index.iteration;
  return METART_OK;
}

metart_status Trainer::resume(const char *dir, int64_t *iteration) {
  fs::path gathered = fs::path(dir) / "checkpoint.safetensors";
  fs::path latest = fs::path(dir) / kLatest;
  std::error_code ec;
  bool haveGathered = fs::exists(gathered, ec),
       haveSharded = fs::exists(latest, ec);
  if (!haveGathered && !haveSharded)
    return fail(METART_ERROR_IO,
                "'%s' holds no checkpoint (neither checkpoint.safetensors "
                "nor checkpoint.latest)",
                dir);
  // Both formats (a run may switch): the later iteration wins, read from
  // the index and from the file's count before either loads.
  if (haveSharded && haveGathered) {
    int64_t shardedIteration = -1, gatheredIteration = -1;
    std::ifstream pointer(latest);
    std::string name;
    if (pointer && std::getline(pointer, name)) {
      std::ifstream index(fs::path(dir) / name / "index.json");
      nlohmann::json parsed =
          nlohmann::json::parse(index, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_object() && parsed.contains("iteration") &&
          parsed["iteration"].is_number_integer())
        shardedIteration = parsed["iteration"].get<int64_t>();
    }
    char message[512] = "";
    metart_safetensors *file = nullptr;
    if (!metart_safetensors_open(gathered.string().c_str(), &file, message,
                                 sizeof(message))) {
      int32_t dtype = 0, rank = 0;
      const int64_t *shape = nullptr;
      const void *data = nullptr;
      if (!metart_safetensors_find(file, "meta.iteration", &dtype, &rank,
                                   &shape, &data) &&
          dtype == METART_I64 && rank == 0)
        std::memcpy(&gatheredIteration, data, 8);
      metart_safetensors_close(file);
    }
    if (gatheredIteration > shardedIteration)
      haveSharded = false;
  }
  if (haveSharded) {
    if (metart_status s = loadSharded(dir, iteration))
      return s;
    std::ifstream pointer(latest);
    std::string name;
    std::getline(pointer, name);
    lastCheckpoint = (fs::path(dir) / name).string();
    return METART_OK;
  }
  if (metart_status s = loadParams(gathered.string().c_str(), true, iteration))
    return s;
  lastCheckpoint = gathered.string();
  return METART_OK;
}

} // namespace metart::train
