//===- SafetensorsHeader.cpp - read tensor shapes of a safetensors file ---===//

#include "metac/Frontend/SafetensorsHeader.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace metac::frontend;

static llvm::Error corrupt(llvm::StringRef path, const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + path +
                                     "' is not a valid safetensors "
                                     "file: " +
                                     why);
}

llvm::Expected<llvm::StringMap<TensorInfo>>
metac::frontend::readSafetensorsHeader(llvm::StringRef path) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return llvm::createStringError(file.getError(),
                                   "cannot open '" + path +
                                       "': " + file.getError().message());
  llvm::StringRef bytes = (*file)->getBuffer();
  if (bytes.size() < 8)
    return corrupt(path, "shorter than its 8-byte header length");
  uint64_t headerSize = llvm::support::endian::read64le(bytes.data());
  if (headerSize > bytes.size() - 8 || headerSize > (uint64_t(100) << 20))
    return corrupt(path, "header length " + llvm::Twine(headerSize) +
                             " exceeds the file");
  llvm::StringRef header = bytes.substr(8, headerSize);
  uint64_t dataSize = bytes.size() - 8 - headerSize;
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(header);
  if (!json)
    return corrupt(path,
                   "header is not JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return corrupt(path, "header is not a JSON object");
  llvm::StringMap<TensorInfo> tensors;
  for (const auto &[key, value] : *object) {
    if (key == "__metadata__")
      continue;
    const llvm::json::Object *entry = value.getAsObject();
    const llvm::json::Array *shape = entry ? entry->getArray("shape") : nullptr;
    const llvm::json::Array *offsets =
        entry ? entry->getArray("data_offsets") : nullptr;
    std::optional<llvm::StringRef> dtype =
        entry ? entry->getString("dtype") : std::nullopt;
    if (!shape || !offsets || !dtype || offsets->size() != 2)
      return corrupt(path, "tensor '" + key.str() +
                               "' lacks dtype, shape or data_offsets");
    TensorInfo info;
    info.dtype = dtype->str();
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> size = d.getAsInteger();
      if (!size || *size < 0)
        return corrupt(path, "tensor '" + key.str() + "' has a bad shape");
      info.shape.push_back(*size);
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > dataSize)
      return corrupt(path, "tensor '" + key.str() +
                               "' has data offsets outside the file");
    tensors[key.str()] = std::move(info);
  }
  return tensors;
}
