//===- Json.cpp - the JSON of safetensors headers -------------------------===//
//
// Headers are read with nlohmann-json (SAX events into JsonValue, bounded
// in depth so that a corrupt header of nested brackets cannot exhaust the
// stack); writers escape strings as serde_json does.
//
//===----------------------------------------------------------------------===//

#include "io/Json.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <tuple>

using namespace metart::io;

/// How deeply arrays and objects may nest (a header needs three levels).
static constexpr int kMaxDepth = 64;

std::optional<uint64_t> JsonValue::asIndex() const {
  if (kind != Kind::Number || text.empty() || text[0] == '-')
    return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10)
      return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

const JsonValue *JsonValue::find(std::string_view key) const {
  for (const auto &member : members)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

const char *metart::io::describeKind(JsonValue::Kind kind) {
  switch (kind) {
  case JsonValue::Kind::Null:
    return "null";
  case JsonValue::Kind::Bool:
    return "a boolean";
  case JsonValue::Kind::Number:
    return "a number";
  case JsonValue::Kind::String:
    return "a string";
  case JsonValue::Kind::Array:
    return "an array";
  case JsonValue::Kind::Object:
    return "an object";
  }
  return "a value";
}

/// Appends the UTF-8 encoding of `code` (at most U+10FFFF) to `out`.
static void appendUtf8(std::string &out, uint32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

bool metart::io::isValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
    uint8_t lead = byte(i);
    size_t length;
    uint32_t code = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    }
    if ((lead & 0xE0) == 0xC0) {
      length = 2;
      code = lead & 0x1F;
    } else if ((lead & 0xF0) == 0xE0) {
      length = 3;
      code = lead & 0x0F;
    } else if ((lead & 0xF8) == 0xF0) {
      length = 4;
      code = lead & 0x07;
    } else {
      return false;
    }
    if (text.size() - i < length)
      return false;
    for (size_t k = 1; k < length; ++k) {
      if ((byte(i + k) & 0xC0) != 0x80)
        return false;
      code = (code << 6) | (byte(i + k) & 0x3F);
    }
    static constexpr uint32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[length] || code > 0x10FFFF ||
        (code >= 0xD800 && code <= 0xDFFF))
      return false;
    i += length;
  }
  return true;
}

void metart::io::appendJsonString(std::string &out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<uint8_t>(c) < 0x20) {
        char escape[8];
        std::snprintf(escape, sizeof(escape), "\\u%04x",
                      static_cast<unsigned>(c));
        out += escape;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

namespace {

/// Builds JsonValues from nlohmann-json's SAX events: members stay in file
/// order with duplicate keys (the reader decides about them), numbers keep
/// their text, and nesting is bounded so that a header of brackets cannot
/// exhaust the stack.
class Builder final : public nlohmann::json_sax<nlohmann::json> {
public:
  explicit Builder(std::string &error) : error(error) {}

  JsonValue root;

  bool null() override { return add(JsonValue::Kind::Null); }
  bool boolean(bool value) override {
    JsonValue *v = add(JsonValue::Kind::Bool);
    v->boolean = value;
    return true;
  }
  bool number_integer(number_integer_t value) override {
    return number(std::to_string(value));
  }
  bool number_unsigned(number_unsigned_t value) override {
    return number(std::to_string(value));
  }
  bool number_float(number_float_t, const string_t &text) override {
    return number(text);
  }
  bool string(string_t &value) override {
    add(JsonValue::Kind::String)->text = std::move(value);
    return true;
  }
  bool binary(binary_t &) override { return false; } // not in JSON text
  bool start_object(std::size_t) override {
    return open(JsonValue::Kind::Object);
  }
  bool key(string_t &name) override {
    pendingKey = std::move(name);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override {
    return open(JsonValue::Kind::Array);
  }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &e) override {
    // "[json.exception.parse_error.101] parse error at line 1, column 8:
    // syntax error while parsing object - ..." -> the part after ": ".
    std::string what = e.what();
    size_t colon = what.find(": ");
    error = (colon == std::string::npos ? what : what.substr(colon + 2)) +
            " at byte " + std::to_string(position > 0 ? position - 1 : 0);
    return false;
  }

private:
  /// A new value where the parser is: the root, an array's next item, or
  /// the member of the pending key.
  JsonValue *add(JsonValue::Kind kind) {
    JsonValue *v = &root;
    if (!containers.empty()) {
      JsonValue &parent = *containers.back();
      if (parent.kind == JsonValue::Kind::Array) {
        parent.items.emplace_back();
        v = &parent.items.back();
      } else {
        parent.members.emplace_back(std::move(pendingKey), JsonValue());
        v = &parent.members.back().second;
      }
    }
    v->kind = kind;
    return v;
  }
  bool number(std::string text) {
    add(JsonValue::Kind::Number)->text = std::move(text);
    return true;
  }
  bool open(JsonValue::Kind kind) {
    if (containers.size() >= kMaxDepth) {
      error =
          "arrays and objects nested deeper than " + std::to_string(kMaxDepth);
      return false;
    }
    containers.push_back(add(kind));
    return true;
  }
  bool close() {
    containers.pop_back();
    return true;
  }

  std::string &error;
  std::string pendingKey;
  /// The arrays and objects being filled, innermost last (their storage
  /// does not move: a parent gains no item while a child is open).
  std::vector<JsonValue *> containers;
};

} // namespace

std::optional<JsonValue> metart::io::parseJson(std::string_view text,
                                               std::string &error) {
  if (!isValidUtf8(text)) {
    error = "the text is not valid UTF-8";
    return std::nullopt;
  }
  Builder builder(error);
  if (!nlohmann::json::sax_parse(text.begin(), text.end(), &builder))
    return std::nullopt;
  return std::move(builder.root);
}
