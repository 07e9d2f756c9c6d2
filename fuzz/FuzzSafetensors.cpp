//===- FuzzSafetensors.cpp - libFuzzer target for the safetensors reader --===//
//
// Every input is written to a file and opened with metart_safetensors_open
// (the runtime's reader: parameters, checkpoints, episode files). Besides
// the sanitizers' checks, the target asserts:
//  - a refused file has a message naming the function;
//  - every tensor of an accepted file has a known type, a shape whose
//    bytes fit, and data aligned to its element size that can be read in
//    full (AddressSanitizer checks the reads);
//  - an accepted file written back with metart_safetensors_write opens
//    again with the same names, types, shapes and bytes.
//
//===----------------------------------------------------------------------===//

#include "io/Safetensors.h"
#include "metart/data.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

std::string scratch(const char *suffix) {
  const char *dir = std::getenv("TMPDIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/metac-fuzz-" +
         std::to_string(getpid()) + suffix;
}

/// Reads every byte of every tensor; returns their sum (so that the reads
/// are not optimized away).
unsigned touch(const metart_safetensors &file) {
  unsigned sum = 0;
  for (const auto &[name, tensor] : file.tensors) {
    size_t element = metart::io::dtypeBytes(tensor.dtype);
    if (element == 0)
      fail("an accepted tensor has an unknown type");
    std::optional<uint64_t> bytes = metart::io::tensorBytes(
        element, tensor.shape.data(), tensor.shape.size());
    if (!bytes)
      fail("an accepted tensor's bytes overflow");
    if (*bytes && reinterpret_cast<uintptr_t>(tensor.data) % element)
      fail("an accepted tensor's data is not aligned to its element");
    const auto *data = static_cast<const unsigned char *>(tensor.data);
    for (uint64_t i = 0; i < *bytes; ++i)
      sum += data[i];
  }
  return sum;
}

void roundTrip(const metart_safetensors &file) {
  std::vector<metart_named_tensor> tensors;
  for (const auto &[name, tensor] : file.tensors)
    tensors.push_back({name.c_str(), tensor.dtype,
                       static_cast<int32_t>(tensor.shape.size()),
                       tensor.shape.data(), tensor.data});
  std::string path = scratch(".written.safetensors");
  char error[512];
  if (metart_safetensors_write(path.c_str(), tensors.data(),
                               static_cast<int64_t>(tensors.size()), error,
                               sizeof(error)) != METART_OK)
    fail("an accepted file cannot be written back");
  metart_safetensors *again = nullptr;
  if (metart_safetensors_open(path.c_str(), &again, error, sizeof(error)) !=
      METART_OK)
    fail("a file written back does not open");
  if (again->tensors.size() != file.tensors.size())
    fail("a file written back has another number of tensors");
  for (const auto &[name, tensor] : file.tensors) {
    auto it = again->tensors.find(name);
    if (it == again->tensors.end())
      fail("a file written back lost a tensor");
    const metart::io::SafetensorsTensor &copy = it->second;
    if (copy.dtype != tensor.dtype || copy.shape != tensor.shape)
      fail("a file written back changed a type or a shape");
    uint64_t bytes =
        *metart::io::tensorBytes(metart::io::dtypeBytes(tensor.dtype),
                                 tensor.shape.data(), tensor.shape.size());
    if (bytes && std::memcmp(copy.data, tensor.data, bytes) != 0)
      fail("a file written back changed a tensor's bytes");
  }
  metart_safetensors_close(again);
  std::remove(path.c_str());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = scratch(".safetensors");
  std::FILE *out = std::fopen(path.c_str(), "wb");
  if (!out)
    return 0;
  std::fwrite(data, 1, size, out);
  std::fclose(out);
  metart_safetensors *file = nullptr;
  char error[512] = "";
  metart_status status =
      metart_safetensors_open(path.c_str(), &file, error, sizeof(error));
  if (status != METART_OK) {
    if (file)
      fail("a refused file was returned");
    if (std::strncmp(error, "metart_safetensors_open: ", 25) != 0)
      fail("a refused file has no message naming the reader");
    return 0;
  }
  volatile unsigned sink = touch(*file);
  (void)sink;
  roundTrip(*file);
  metart_safetensors_close(file);
  return 0;
}
