//===- SafetensorsReader.cpp - opening and validating safetensors ---------===//
//
// Reads a whole safetensors file into memory and checks everything before
// trusting it: the header length against the file, the header as UTF-8
// JSON, every tensor's dtype, shape and offsets, and that the tensors cover
// the data section exactly, without overlaps or gaps (what the reference
// implementation accepts). A corrupt file is METART_ERROR_IO with a message
// that names the file and the problem, never a crash.
//
//===----------------------------------------------------------------------===//

#include "io/ErrorBuffer.h"
#include "io/Json.h"
#include "io/Safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <sstream>
#include <sys/stat.h>

using namespace metart::io;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors files are little-endian; this reader assumes the host is"
#endif

namespace {

/// Where one tensor's bytes lie in the data section.
struct Span {
  uint64_t begin;
  uint64_t end;
  const std::string *name;
};

/// Opens one file; `fail` records the first problem.
class Reader {
public:
  Reader(const char *path, std::string &error) : path(path), error(error) {}

  metart_status read(std::unique_ptr<metart_safetensors> &out);

private:
  metart_status fail(metart_status status, const std::string &message) {
    error = path + ": " + message;
    return status;
  }
  metart_status corrupt(const std::string &message) {
    return fail(METART_ERROR_IO, message);
  }

  metart_status load();
  metart_status checkMetadata(const JsonValue &metadata);
  metart_status addTensor(const std::string &name, const JsonValue &info);
  metart_status checkCoverage();

  std::string path;
  std::string &error;
  std::unique_ptr<metart_safetensors> file;
  uint64_t fileSize = 0;
  uint64_t headerLength = 0;
  uint64_t dataSize = 0;
  std::vector<Span> spans;
};

} // namespace

metart_status Reader::load() {
  std::FILE *stream = std::fopen(path.c_str(), "rb");
  if (!stream)
    return fail(METART_ERROR_IO,
                std::string("cannot open the file: ") + std::strerror(errno));
  struct stat info;
  if (fstat(fileno(stream), &info) != 0 || !S_ISREG(info.st_mode)) {
    std::fclose(stream);
    return fail(METART_ERROR_IO, "not a regular file");
  }
  fileSize = static_cast<uint64_t>(info.st_size);
  file->contents.reset(new (std::nothrow) uint64_t[(fileSize + 7) / 8]);
  if (!file->contents) {
    std::fclose(stream);
    return fail(METART_ERROR_OUT_OF_MEMORY, "cannot allocate " +
                                                std::to_string(fileSize) +
                                                " bytes for the file");
  }
  bool complete =
      std::fread(file->contents.get(), 1, fileSize, stream) == fileSize;
  std::fclose(stream);
  if (!complete)
    return fail(METART_ERROR_IO, "cannot read the file's " +
                                     std::to_string(fileSize) + " bytes");
  return METART_OK;
}

metart_status Reader::checkMetadata(const JsonValue &metadata) {
  if (metadata.kind != JsonValue::Kind::Object)
    return corrupt("\"__metadata__\" is " +
                   std::string(describeKind(metadata.kind)) +
                   ", not an object of strings");
  for (const auto &[key, value] : metadata.members)
    if (value.kind != JsonValue::Kind::String)
      return corrupt("\"__metadata__\" entry \"" + key + "\" is " +
                     describeKind(value.kind) + ", not a string");
  return METART_OK;
}

/// Prints `[a, b, ...]`.
static std::string printList(const std::vector<uint64_t> &values) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << ']';
  return os.str();
}

/// Reads `value` as an array of non-negative integers into `out`.
static bool readIndices(const JsonValue &value, std::vector<uint64_t> &out) {
  if (value.kind != JsonValue::Kind::Array)
    return false;
  for (const JsonValue &item : value.items) {
    std::optional<uint64_t> index = item.asIndex();
    if (!index)
      return false;
    out.push_back(*index);
  }
  return true;
}

metart_status Reader::addTensor(const std::string &name,
                                const JsonValue &info) {
  std::string where = "tensor \"" + name + "\": ";
  if (info.kind != JsonValue::Kind::Object)
    return corrupt(where + "the entry is " + describeKind(info.kind) +
                   ", not an object");
  const JsonValue *dtypeValue = info.find("dtype");
  const JsonValue *shapeValue = info.find("shape");
  const JsonValue *offsetsValue = info.find("data_offsets");
  for (auto [value, key] :
       {std::pair(dtypeValue, "dtype"), std::pair(shapeValue, "shape"),
        std::pair(offsetsValue, "data_offsets")})
    if (!value)
      return corrupt(where + "missing \"" + key + "\"");

  if (dtypeValue->kind != JsonValue::Kind::String)
    return corrupt(where + "\"dtype\" is " + describeKind(dtypeValue->kind) +
                   ", not a string");
  const SafetensorsDtype *dtype = findSafetensorsDtype(dtypeValue->text);
  if (!dtype)
    return corrupt(where + "unknown dtype \"" + dtypeValue->text + "\"");
  if (dtype->metartDtype < 0)
    return fail(METART_ERROR_UNSUPPORTED,
                where + "dtype " + dtype->name +
                    " is not supported (only F32, F64, I32 and I64 are)");

  std::vector<uint64_t> shape, offsets;
  if (!readIndices(*shapeValue, shape) ||
      std::any_of(shape.begin(), shape.end(),
                  [](uint64_t dim) { return dim > INT64_MAX; }))
    return corrupt(where + "\"shape\" is not an array of non-negative "
                           "64-bit integers");
  if (!readIndices(*offsetsValue, offsets) || offsets.size() != 2)
    return corrupt(where + "\"data_offsets\" is not an array of two "
                           "non-negative integers");
  uint64_t begin = offsets[0], end = offsets[1];
  if (begin > end)
    return corrupt(where + "data_offsets " + printList(offsets) +
                   " end before they begin");
  if (end > dataSize)
    return corrupt(where + "data_offsets " + printList(offsets) +
                   " run past the end of the data section (" +
                   std::to_string(dataSize) + " bytes)");

  size_t elementSize = dtypeBytes(dtype->metartDtype);
  std::optional<uint64_t> size =
      tensorBytes(elementSize, shape.data(), shape.size());
  if (!size)
    return corrupt(where + "shape " + printList(shape) + " of " + dtype->name +
                   " overflows 64-bit sizes");
  uint64_t bytes = *size;
  if (bytes != end - begin)
    return corrupt(where + "shape " + printList(shape) + " of " + dtype->name +
                   " needs " + std::to_string(bytes) +
                   " bytes but data_offsets " + printList(offsets) + " hold " +
                   std::to_string(end - begin));

  const char *base = reinterpret_cast<const char *>(file->contents.get());
  const char *data = base + 8 + headerLength + begin;
  if (reinterpret_cast<uintptr_t>(data) % elementSize != 0) {
    auto copy =
        std::unique_ptr<uint64_t[]>(new (std::nothrow) uint64_t[bytes / 8 + 1]);
    if (!copy)
      return fail(METART_ERROR_OUT_OF_MEMORY,
                  where + "cannot allocate an aligned copy");
    std::memcpy(copy.get(), data, bytes);
    data = reinterpret_cast<const char *>(copy.get());
    file->copies.push_back(std::move(copy));
  }

  auto [it, inserted] = file->tensors.emplace(
      name, SafetensorsTensor{dtype->metartDtype, {}, data});
  if (!inserted)
    return corrupt("tensor \"" + name + "\" appears twice in the header");
  it->second.shape.assign(shape.begin(), shape.end());
  spans.push_back({begin, end, &it->first});
  return METART_OK;
}

metart_status Reader::checkCoverage() {
  std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  auto gap = [&](uint64_t begin, uint64_t end) {
    return corrupt("no tensor covers bytes [" + std::to_string(begin) + ", " +
                   std::to_string(end) + ") of the data section");
  };
  uint64_t covered = 0;
  const Span *previous = nullptr;
  for (const Span &span : spans) {
    if (span.begin < covered)
      return corrupt("tensors \"" + *previous->name + "\" [" +
                     std::to_string(previous->begin) + ", " +
                     std::to_string(previous->end) + ") and \"" + *span.name +
                     "\" [" + std::to_string(span.begin) + ", " +
                     std::to_string(span.end) + ") overlap");
    if (span.begin > covered)
      return gap(covered, span.begin);
    covered = span.end;
    previous = &span;
  }
  if (covered != dataSize)
    return gap(covered, dataSize);
  return METART_OK;
}

metart_status Reader::read(std::unique_ptr<metart_safetensors> &out) {
  file.reset(new (std::nothrow) metart_safetensors);
  if (!file)
    return fail(METART_ERROR_OUT_OF_MEMORY, "cannot allocate the file");
  if (metart_status status = load())
    return status;

  if (fileSize < 8)
    return corrupt("the file has " + std::to_string(fileSize) +
                   " bytes, fewer than the 8 of the header length");
  const unsigned char *bytes =
      reinterpret_cast<const unsigned char *>(file->contents.get());
  for (int i = 7; i >= 0; --i)
    headerLength = (headerLength << 8) | bytes[i];
  if (headerLength > fileSize - 8)
    return corrupt("the header length " + std::to_string(headerLength) +
                   " runs past the end of the file (" +
                   std::to_string(fileSize - 8) + " bytes follow it)");
  dataSize = fileSize - 8 - headerLength;

  std::string jsonError;
  std::optional<JsonValue> header = parseJson(
      std::string_view(reinterpret_cast<const char *>(bytes) + 8, headerLength),
      jsonError);
  if (!header)
    return corrupt("the header is not valid JSON: " + jsonError);
  if (header->kind != JsonValue::Kind::Object)
    return corrupt("the header is " + std::string(describeKind(header->kind)) +
                   ", not a JSON object");

  bool sawMetadata = false;
  for (const auto &[name, info] : header->members) {
    if (name != kMetadataKey) {
      if (metart_status status = addTensor(name, info))
        return status;
      continue;
    }
    if (sawMetadata)
      return corrupt("\"__metadata__\" appears twice in the header");
    sawMetadata = true;
    if (metart_status status = checkMetadata(info))
      return status;
  }
  if (metart_status status = checkCoverage())
    return status;
  out = std::move(file);
  return METART_OK;
}

metart_status
metart::io::openSafetensors(const char *path,
                            std::unique_ptr<metart_safetensors> &out,
                            std::string &error) {
  return Reader(path, error).read(out);
}

metart_status metart_safetensors_open(const char *path,
                                      metart_safetensors **out_file,
                                      char *error, size_t error_size) {
  std::string message;
  metart_status status = METART_ERROR_INVALID_ARGUMENT;
  std::unique_ptr<metart_safetensors> file;
  if (!out_file)
    message = "out_file is null";
  else if (!path)
    message = "path is null";
  else
    status = openSafetensors(path, file, message);
  if (out_file)
    *out_file = file.release();
  writeError(status == METART_OK ? std::string()
                                 : "metart_safetensors_open: " + message,
             error, error_size);
  return status;
}

void metart_safetensors_close(metart_safetensors *file) { delete file; }

metart_status metart_safetensors_find(const metart_safetensors *file,
                                      const char *name, int32_t *out_dtype,
                                      int32_t *out_rank,
                                      const int64_t **out_shape,
                                      const void **out_data) {
  if (!file || !name)
    return METART_ERROR_INVALID_ARGUMENT;
  auto it = file->tensors.find(std::string_view(name));
  if (it == file->tensors.end())
    return METART_ERROR_INVALID_ARGUMENT;
  const SafetensorsTensor &tensor = it->second;
  if (out_dtype)
    *out_dtype = tensor.dtype;
  if (out_rank)
    *out_rank = static_cast<int32_t>(tensor.shape.size());
  if (out_shape)
    *out_shape = tensor.shape.data();
  if (out_data)
    *out_data = tensor.data;
  return METART_OK;
}
