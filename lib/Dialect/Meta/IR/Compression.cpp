//===- Compression.cpp - the names of gradient compressions ---------------===//

#include "metac/Dialect/Meta/IR/Compression.h"

#include <cmath>

using namespace metac::meta;

std::optional<Compression> metac::meta::parseCompression(llvm::StringRef text) {
  Compression c;
  if (text == "none")
    return c;
  if (text == "bf16" || text == "fp16") {
    c.kind = text == "bf16" ? Compression::Kind::BF16 : Compression::Kind::FP16;
    return c;
  }
  auto [method, value] = text.split(':');
  if (value.empty() || value.getAsDouble(c.parameter) ||
      !std::isfinite(c.parameter))
    return std::nullopt;
  if (method == "topk" && c.parameter > 0 && c.parameter <= 1) {
    c.kind = Compression::Kind::TopK;
    return c;
  }
  if (method == "powersgd" && c.parameter >= 1 && c.parameter < 1e6 &&
      c.parameter == std::floor(c.parameter)) {
    c.kind = Compression::Kind::PowerSGD;
    return c;
  }
  return std::nullopt;
}
