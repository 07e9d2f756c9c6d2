//===- Json.cpp - the JSON of safetensors headers -------------------------===//
//
// A recursive-descent reader over a string view, bounded in depth so that a
// corrupt header of nested brackets cannot exhaust the stack, and the
// escaping of strings for writers.
//
//===----------------------------------------------------------------------===//

#include "io/Json.h"

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

/// Reads one value from a string view; the first error stops it.
class Parser {
public:
  Parser(std::string_view text, std::string &error)
      : text(text), error(error) {}

  std::optional<JsonValue> parseDocument() {
    JsonValue value;
    if (!parseValue(value, 0))
      return std::nullopt;
    skipWhitespace();
    if (pos != text.size()) {
      fail("unexpected text after the JSON value");
      return std::nullopt;
    }
    return value;
  }

private:
  /// Records `message` at the current offset; returns false.
  bool fail(const std::string &message) {
    error = message + " at byte " + std::to_string(pos);
    return false;
  }

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return text[pos]; }

  void skipWhitespace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                        peek() == '\r'))
      ++pos;
  }

  bool consume(char c) {
    if (atEnd() || peek() != c)
      return false;
    ++pos;
    return true;
  }

  bool expect(char c) {
    return consume(c) || fail(std::string("expected '") + c + "'");
  }

  bool parseValue(JsonValue &value, int depth) {
    skipWhitespace();
    if (atEnd())
      return fail("unexpected end of the text");
    char c = peek();
    if (c == '{' || c == '[') {
      if (depth >= kMaxDepth)
        return fail("arrays and objects nested too deeply");
      return c == '{' ? parseObject(value, depth) : parseArray(value, depth);
    }
    if (c == '"') {
      value.kind = JsonValue::Kind::String;
      return parseString(value.text);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(value);
    return parseLiteral(value);
  }

  bool parseLiteral(JsonValue &value) {
    for (auto [word, kind, boolean] :
         {std::tuple("true", JsonValue::Kind::Bool, true),
          std::tuple("false", JsonValue::Kind::Bool, false),
          std::tuple("null", JsonValue::Kind::Null, false)}) {
      std::string_view literal(word);
      if (text.substr(pos, literal.size()) == literal) {
        pos += literal.size();
        value.kind = kind;
        value.boolean = boolean;
        return true;
      }
    }
    return fail("invalid JSON value");
  }

  bool parseObject(JsonValue &value, int depth) {
    value.kind = JsonValue::Kind::Object;
    ++pos;
    skipWhitespace();
    if (consume('}'))
      return true;
    do {
      skipWhitespace();
      std::string key;
      if (atEnd() || peek() != '"')
        return fail("expected a string key");
      if (!parseString(key))
        return false;
      skipWhitespace();
      if (!expect(':'))
        return false;
      JsonValue member;
      if (!parseValue(member, depth + 1))
        return false;
      value.members.emplace_back(std::move(key), std::move(member));
      skipWhitespace();
    } while (consume(','));
    return expect('}');
  }

  bool parseArray(JsonValue &value, int depth) {
    value.kind = JsonValue::Kind::Array;
    ++pos;
    skipWhitespace();
    if (consume(']'))
      return true;
    do {
      JsonValue item;
      if (!parseValue(item, depth + 1))
        return false;
      value.items.push_back(std::move(item));
      skipWhitespace();
    } while (consume(','));
    return expect(']');
  }

  bool parseDigits() {
    size_t start = pos;
    while (!atEnd() && peek() >= '0' && peek() <= '9')
      ++pos;
    return pos != start || fail("expected a digit");
  }

  bool parseNumber(JsonValue &value) {
    size_t start = pos;
    consume('-');
    if (!consume('0') && !parseDigits())
      return false;
    if (consume('.') && !parseDigits())
      return false;
    if (consume('e') || consume('E')) {
      if (!consume('+'))
        consume('-');
      if (!parseDigits())
        return false;
    }
    value.kind = JsonValue::Kind::Number;
    value.text = std::string(text.substr(start, pos - start));
    return true;
  }

  /// Reads four hex digits of a \u escape.
  bool parseHex4(uint32_t &code) {
    if (text.size() - pos < 4)
      return fail("truncated \\u escape");
    code = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      uint32_t digit;
      if (c >= '0' && c <= '9')
        digit = static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        digit = static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        digit = static_cast<uint32_t>(c - 'A' + 10);
      else
        return fail("invalid hex digit in a \\u escape");
      code = code * 16 + digit;
    }
    return true;
  }

  bool parseEscape(std::string &out) {
    if (atEnd())
      return fail("unterminated string");
    char c = text[pos++];
    switch (c) {
    case '"':
    case '\\':
    case '/':
      out += c;
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'n':
      out += '\n';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'u':
      break;
    default:
      --pos;
      return fail("invalid escape in a string");
    }
    uint32_t code = 0;
    if (!parseHex4(code))
      return false;
    if (code >= 0xDC00 && code <= 0xDFFF)
      return fail("unpaired surrogate in a \\u escape");
    if (code >= 0xD800 && code <= 0xDBFF) {
      uint32_t low = 0;
      if (!consume('\\') || !consume('u') || !parseHex4(low) || low < 0xDC00 ||
          low > 0xDFFF)
        return fail("unpaired surrogate in a \\u escape");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    appendUtf8(out, code);
    return true;
  }

  bool parseString(std::string &out) {
    ++pos;
    while (true) {
      if (atEnd())
        return fail("unterminated string");
      char c = text[pos];
      if (c == '"') {
        ++pos;
        return true;
      }
      if (static_cast<uint8_t>(c) < 0x20)
        return fail("control character in a string");
      ++pos;
      if (c != '\\')
        out += c;
      else if (!parseEscape(out))
        return false;
    }
  }

  std::string_view text;
  std::string &error;
  size_t pos = 0;
};

} // namespace

std::optional<JsonValue> metart::io::parseJson(std::string_view text,
                                               std::string &error) {
  if (!isValidUtf8(text)) {
    error = "the text is not valid UTF-8";
    return std::nullopt;
  }
  return Parser(text, error).parseDocument();
}
