//===- SafetensorsWriter.cpp - writing safetensors files ------------------===//
//
// Lays a file out byte for byte as the reference implementation does:
// tensors ordered by its order of dtypes, decreasing (I64, F64, F32, I32:
// by element size, so that with the header padded to a multiple of 8 bytes
// every tensor is aligned), then by name; the header in that order, padded
// with spaces; the data contiguous after it. The file is written atomically.
//
//===----------------------------------------------------------------------===//

#include "io/AtomicFile.h"
#include "io/ErrorBuffer.h"
#include "io/Json.h"
#include "io/Safetensors.h"

#include <algorithm>
#include <set>
#include <string_view>

using namespace metart::io;

namespace {

/// A checked tensor to write.
struct Entry {
  const metart_named_tensor *tensor;
  uint64_t bytes;
};

} // namespace

/// Checks tensor `index` of a write and sets `entry`; on failure returns a
/// message.
static std::string checkTensor(const metart_named_tensor &tensor, int64_t index,
                               Entry &entry) {
  std::string where = "tensor " + std::to_string(index);
  if (!tensor.name)
    return where + " has a null name";
  where += " (\"" + std::string(tensor.name) + "\")";
  std::string_view name(tensor.name);
  if (name.empty())
    return where + " has an empty name";
  if (name == kMetadataKey)
    return where + ": the name is reserved for the file's metadata";
  if (!isValidUtf8(name))
    return where + ": the name is not valid UTF-8";
  size_t elementSize = dtypeBytes(tensor.dtype);
  if (elementSize == 0)
    return where + " has unknown dtype " + std::to_string(tensor.dtype);
  if (tensor.rank < 0 || (tensor.rank > 0 && !tensor.shape))
    return where + " has rank " + std::to_string(tensor.rank) +
           (tensor.rank < 0 ? "" : " and a null shape");
  for (int32_t i = 0; i < tensor.rank; ++i)
    if (tensor.shape[i] < 0)
      return where + " has negative dimension " +
             std::to_string(tensor.shape[i]);
  std::optional<uint64_t> bytes =
      tensorBytes(elementSize, tensor.shape, static_cast<size_t>(tensor.rank));
  if (!bytes)
    return where + " overflows 64-bit sizes";
  if (*bytes > 0 && !tensor.data)
    return where + " has null data";
  entry = {&tensor, *bytes};
  return {};
}

/// Appends `[a, b, ...]` to `out`.
template <typename Int>
static void appendList(std::string &out, const Int *values, size_t count) {
  out += '[';
  for (size_t i = 0; i < count; ++i)
    out += (i ? "," : "") + std::to_string(values[i]);
  out += ']';
}

/// The header for `entries` (in file order), padded with spaces to a
/// multiple of 8 bytes.
static std::string buildHeader(const std::vector<Entry> &entries) {
  std::string header = "{";
  uint64_t offset = 0;
  for (const Entry &entry : entries) {
    const metart_named_tensor &tensor = *entry.tensor;
    if (header.size() > 1)
      header += ',';
    appendJsonString(header, tensor.name);
    header += ":{\"dtype\":";
    appendJsonString(header, safetensorsDtypeName(tensor.dtype));
    header += ",\"shape\":";
    appendList(header, tensor.shape, static_cast<size_t>(tensor.rank));
    header += ",\"data_offsets\":";
    uint64_t offsets[2] = {offset, offset + entry.bytes};
    appendList(header, offsets, 2);
    header += '}';
    offset += entry.bytes;
  }
  header += '}';
  header.resize((header.size() + 7) / 8 * 8, ' ');
  return header;
}

/// Writes `tensors`; on failure returns the status and sets `error`.
static metart_status writeSafetensors(const char *path,
                                      const metart_named_tensor *tensors,
                                      int64_t count, std::string &error) {
  if (!path) {
    error = "path is null";
    return METART_ERROR_INVALID_ARGUMENT;
  }
  if (count < 0 || (count > 0 && !tensors)) {
    error = count < 0 ? "count is negative" : "tensors is null";
    return METART_ERROR_INVALID_ARGUMENT;
  }
  std::vector<Entry> entries(static_cast<size_t>(count));
  std::set<std::string_view> names;
  for (int64_t i = 0; i < count; ++i) {
    error = checkTensor(tensors[i], i, entries[static_cast<size_t>(i)]);
    if (error.empty() && !names.insert(tensors[i].name).second)
      error = "tensor " + std::to_string(i) + " (\"" + tensors[i].name +
              "\") has the name of an earlier tensor";
    if (!error.empty())
      return METART_ERROR_INVALID_ARGUMENT;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    int orderA = safetensorsDtypeOrder(a.tensor->dtype);
    int orderB = safetensorsDtypeOrder(b.tensor->dtype);
    if (orderA != orderB)
      return orderA > orderB;
    return std::string_view(a.tensor->name) < std::string_view(b.tensor->name);
  });

  std::string header = buildHeader(entries);
  unsigned char length[8];
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<unsigned char>(header.size() >> (8 * i));
  std::vector<ByteRange> pieces = {{length, 8}, {header.data(), header.size()}};
  for (const Entry &entry : entries)
    pieces.push_back({entry.tensor->data, static_cast<size_t>(entry.bytes)});
  return writeFileAtomically(path, pieces, error) ? METART_OK : METART_ERROR_IO;
}

metart_status metart_safetensors_write(const char *path,
                                       const metart_named_tensor *tensors,
                                       int64_t count, char *error,
                                       size_t error_size) {
  std::string message;
  metart_status status = writeSafetensors(path, tensors, count, message);
  writeError(status == METART_OK ? std::string()
                                 : "metart_safetensors_write: " + message,
             error, error_size);
  return status;
}
