//===- SafetensorsHeader.h - read tensor shapes of a safetensors file -*- C++
//-*-===//
//
// The compiler needs the shapes of fixed episodes at compile time. A
// safetensors file starts with an 8-byte little-endian header length and a
// JSON header mapping tensor names to dtype, shape and data offsets; only
// that header is read here.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_FRONTEND_SAFETENSORSHEADER_H
#define METAC_FRONTEND_SAFETENSORSHEADER_H

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace metac::frontend {

struct TensorInfo {
  std::string dtype; // "F32", "F64", "I64", ...
  std::vector<int64_t> shape;
};

/// Reads and checks the header of the safetensors file at `path`: the
/// length, the JSON, and that every tensor's data range lies in the file.
llvm::Expected<llvm::StringMap<TensorInfo>>
readSafetensorsHeader(llvm::StringRef path);

} // namespace metac::frontend

#endif // METAC_FRONTEND_SAFETENSORSHEADER_H
