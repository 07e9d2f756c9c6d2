//===- Compression.h - the names of gradient compressions -------*- C++ -*-===//
//
// What `--compress` and `parallel { compress = ... }` accept, parsed in one
// place for the driver, the frontend and meta-select-allreduce: none, bf16
// or fp16 (a 16-bit wire), topk:RATIO (each rank sends that fraction of
// its entries) or powersgd:RANK (a rank-RANK factorization).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_DIALECT_META_IR_COMPRESSION_H
#define METAC_DIALECT_META_IR_COMPRESSION_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace metac::meta {

struct Compression {
  enum class Kind { None, BF16, FP16, TopK, PowerSGD } kind = Kind::None;
  /// TopK: the fraction sent, in (0, 1]; PowerSGD: the rank, >= 1.
  double parameter = 0;

  /// Lossy methods with error feedback (topk, powersgd): the outer
  /// gradients only, one state per call site.
  bool withErrorFeedback() const {
    return kind == Kind::TopK || kind == Kind::PowerSGD;
  }
};

/// The accepted forms, for messages.
inline constexpr llvm::StringLiteral kCompressionForms =
    "none, bf16, fp16, topk:RATIO (0 < RATIO <= 1) or powersgd:RANK "
    "(a whole number >= 1)";

/// Parses `text`; nullopt when it is none of kCompressionForms.
std::optional<Compression> parseCompression(llvm::StringRef text);

} // namespace metac::meta

#endif // METAC_DIALECT_META_IR_COMPRESSION_H
