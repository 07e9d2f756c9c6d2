//===- Json.h - the JSON of safetensors headers -----------------*- C++ -*-===//
//
// The JSON of safetensors headers: a reader (nlohmann-json underneath,
// RFC 8259, nesting bounded) into a value that keeps members in file order,
// and the string escaping a writer needs. Numbers keep their text; a
// header only ever needs them as non-negative integers.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_IO_JSON_H
#define METART_SRC_IO_JSON_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace metart::io {

/// A parsed JSON value. Objects keep their members in file order, duplicate
/// keys included (the caller decides whether they are an error).
struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  bool boolean = false;
  /// The decoded string, or the number as written.
  std::string text;
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> members;

  /// The value of a number written as a non-negative integer (no fraction,
  /// no exponent) that fits 64 bits; nothing for anything else.
  std::optional<uint64_t> asIndex() const;
  /// The first member named `key` of an object, or null.
  const JsonValue *find(std::string_view key) const;
};

/// The name of a kind in messages ("an object", "a string", ...).
const char *describeKind(JsonValue::Kind kind);

/// Parses `text` as one JSON value followed only by whitespace. On failure,
/// returns nothing and sets `error` to the problem and its byte offset.
std::optional<JsonValue> parseJson(std::string_view text, std::string &error);

/// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates).
bool isValidUtf8(std::string_view text);

/// Appends `text` (UTF-8) to `out` as a quoted JSON string, escaped as
/// serde_json (which the reference implementation uses) escapes it.
void appendJsonString(std::string &out, std::string_view text);

} // namespace metart::io

#endif // METART_SRC_IO_JSON_H
