//===- Lexer.cpp - spec language lexer ------------------------------------===//

#include "metac/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cerrno>
#include <cstdlib>

using namespace metac::frontend;

llvm::StringRef metac::frontend::getTokenKindName(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::Error:
    return "invalid token";
  case TokenKind::Identifier:
    return "identifier";
  case TokenKind::Integer:
    return "integer";
  case TokenKind::Float:
    return "number";
  case TokenKind::String:
    return "string";
  case TokenKind::KwModel:
    return "'model'";
  case TokenKind::KwBlock:
    return "'block'";
  case TokenKind::KwTasks:
    return "'tasks'";
  case TokenKind::KwTrain:
    return "'train'";
  case TokenKind::KwReturn:
    return "'return'";
  case TokenKind::KwRepeat:
    return "'repeat'";
  case TokenKind::KwConst:
    return "'const'";
  case TokenKind::LParen:
    return "'('";
  case TokenKind::RParen:
    return "')'";
  case TokenKind::LBrace:
    return "'{'";
  case TokenKind::RBrace:
    return "'}'";
  case TokenKind::LBracket:
    return "'['";
  case TokenKind::RBracket:
    return "']'";
  case TokenKind::Comma:
    return "','";
  case TokenKind::Equal:
    return "'='";
  case TokenKind::Arrow:
    return "'->'";
  case TokenKind::Colon:
    return "':'";
  case TokenKind::Plus:
    return "'+'";
  case TokenKind::Minus:
    return "'-'";
  case TokenKind::Star:
    return "'*'";
  case TokenKind::Slash:
    return "'/'";
  }
  return "token";
}

void Lexer::advance() {
  if (atEnd())
    return;
  if (buffer[pos] == '\n') {
    ++line;
    column = 1;
    sawNewline = true;
  } else {
    ++column;
  }
  ++pos;
}

void Lexer::skipWhitespaceAndComments() {
  while (!atEnd()) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' ||
        c == '\v') {
      advance();
    } else if (c == '/' && peek(1) == '/') {
      while (!atEnd() && peek() != '\n')
        advance();
    } else {
      return;
    }
  }
}

Token Lexer::makeToken(TokenKind kind, size_t start, SourceLoc loc) {
  Token tok;
  tok.kind = kind;
  tok.spelling = buffer.slice(start, pos);
  tok.loc = loc;
  return tok;
}

static bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool isDigit(char c) { return c >= '0' && c <= '9'; }

Token Lexer::lexNumber(size_t start, SourceLoc loc) {
  bool isFloat = false;
  while (isDigit(peek()))
    advance();
  if (peek() == '.' && isDigit(peek(1))) {
    isFloat = true;
    advance();
    while (isDigit(peek()))
      advance();
  }
  if (peek() == 'e' || peek() == 'E') {
    size_t save = pos;
    unsigned saveColumn = column;
    advance();
    if (peek() == '+' || peek() == '-')
      advance();
    if (!isDigit(peek())) {
      // "1e" or "1e+": swallow the rest of the malformed literal.
      pos = save;
      column = saveColumn;
      while (isDigit(peek()) || isIdentStart(peek()) || peek() == '.' ||
             peek() == '+' || peek() == '-')
        advance();
      diags.error(loc) << "malformed number '" << buffer.slice(start, pos)
                       << "': expected digits in the exponent";
      return makeToken(TokenKind::Error, start, loc);
    }
    isFloat = true;
    while (isDigit(peek()))
      advance();
  }
  // "1.2.3", "12abc": a number glued to more number or name characters.
  if (isIdentStart(peek()) || (peek() == '.' && isDigit(peek(1)))) {
    while (isDigit(peek()) || isIdentStart(peek()) || peek() == '.')
      advance();
    diags.error(loc) << "malformed number '" << buffer.slice(start, pos) << "'";
    return makeToken(TokenKind::Error, start, loc);
  }
  Token tok =
      makeToken(isFloat ? TokenKind::Float : TokenKind::Integer, start, loc);
  std::string text = tok.spelling.str();
  errno = 0;
  if (isFloat) {
    tok.floatValue = std::strtod(text.c_str(), nullptr);
    if (errno == ERANGE) {
      diags.error(loc) << "number '" << tok.spelling << "' is out of range";
      tok.kind = TokenKind::Error;
    }
    return tok;
  }
  if (tok.spelling.getAsInteger(10, tok.intValue)) {
    diags.error(loc) << "integer '" << tok.spelling
                     << "' is too large (the limit is 2^63 - 1)";
    tok.kind = TokenKind::Error;
  }
  tok.floatValue = static_cast<double>(tok.intValue);
  return tok;
}

Token Lexer::lexString(size_t start, SourceLoc loc) {
  advance(); // opening quote
  std::string value;
  while (true) {
    if (atEnd() || peek() == '\n') {
      diags.error(loc) << "unterminated string";
      return makeToken(TokenKind::Error, start, loc);
    }
    char c = peek();
    advance();
    if (c == '"')
      break;
    if (c == '\\') {
      // A backslash at the end of the line or file escapes nothing: the
      // string is unterminated (reported on the next iteration).
      if (atEnd() || peek() == '\n')
        continue;
      SourceLoc escapeLoc{line, column - 1};
      char e = peek();
      advance();
      switch (e) {
      case 'n':
        value.push_back('\n');
        break;
      case 't':
        value.push_back('\t');
        break;
      case '\\':
      case '"':
        value.push_back(e);
        break;
      default:
        diags.error(escapeLoc)
            << "unknown escape '\\" << llvm::StringRef(&e, 1) << "' in string";
        break;
      }
      continue;
    }
    value.push_back(c);
  }
  Token tok = makeToken(TokenKind::String, start, loc);
  tok.stringValue = std::move(value);
  return tok;
}

Token Lexer::lexIdentifier(size_t start, SourceLoc loc) {
  while (isIdentStart(peek()) || isDigit(peek()))
    advance();
  llvm::StringRef text = buffer.slice(start, pos);
  TokenKind kind = llvm::StringSwitch<TokenKind>(text)
                       .Case("model", TokenKind::KwModel)
                       .Case("block", TokenKind::KwBlock)
                       .Case("tasks", TokenKind::KwTasks)
                       .Case("train", TokenKind::KwTrain)
                       .Case("return", TokenKind::KwReturn)
                       .Case("repeat", TokenKind::KwRepeat)
                       .Case("const", TokenKind::KwConst)
                       .Default(TokenKind::Identifier);
  return makeToken(kind, start, loc);
}

Token Lexer::next() {
  while (true) {
    skipWhitespaceAndComments();
    bool lineStart = sawNewline;
    sawNewline = false;
    SourceLoc loc{line, column};
    size_t start = pos;
    Token tok = [&]() -> Token {
      if (atEnd())
        return makeToken(TokenKind::Eof, start, loc);
      char c = peek();
      if (isIdentStart(c))
        return lexIdentifier(start, loc);
      if (isDigit(c) || (c == '.' && isDigit(peek(1))))
        return lexNumber(start, loc);
      if (c == '"')
        return lexString(start, loc);
      advance();
      switch (c) {
      case '(':
        return makeToken(TokenKind::LParen, start, loc);
      case ')':
        return makeToken(TokenKind::RParen, start, loc);
      case '{':
        return makeToken(TokenKind::LBrace, start, loc);
      case '}':
        return makeToken(TokenKind::RBrace, start, loc);
      case '[':
        return makeToken(TokenKind::LBracket, start, loc);
      case ']':
        return makeToken(TokenKind::RBracket, start, loc);
      case ',':
        return makeToken(TokenKind::Comma, start, loc);
      case '=':
        return makeToken(TokenKind::Equal, start, loc);
      case ':':
        return makeToken(TokenKind::Colon, start, loc);
      case '+':
        return makeToken(TokenKind::Plus, start, loc);
      case '*':
        return makeToken(TokenKind::Star, start, loc);
      case '/':
        return makeToken(TokenKind::Slash, start, loc);
      case '-':
        if (peek() == '>') {
          advance();
          return makeToken(TokenKind::Arrow, start, loc);
        }
        return makeToken(TokenKind::Minus, start, loc);
      default:
        break;
      }
      // Skip a run of bad bytes so binary input yields one error, not many.
      while (!atEnd() && !isIdentStart(peek()) && !isDigit(peek()) &&
             !llvm::StringRef("(){}[],=:+-*/\" \t\r\n").contains(peek()))
        advance();
      auto byte = static_cast<unsigned char>(c);
      if (byte >= 0x20 && byte < 0x7f)
        diags.error(loc) << "unexpected character '" << llvm::StringRef(&c, 1)
                         << "'";
      else
        diags.error(loc) << "unexpected byte "
                         << llvm::utohexstr(byte, false, 2)
                         << " (hexadecimal; is this a text file?)";
      return makeToken(TokenKind::Error, start, loc);
    }();
    tok.atLineStart = lineStart;
    return tok;
  }
}
