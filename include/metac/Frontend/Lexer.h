//===- Lexer.h - spec language lexer ----------------------------*- C++ -*-===//
//
// Splits a spec into tokens. Malformed input never stops the lexer: a bad
// character or literal becomes an error token, reported once, and lexing
// goes on so the parser can report more than one error per run.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_FRONTEND_LEXER_H
#define METAC_FRONTEND_LEXER_H

#include "metac/Frontend/SourceDiagnostics.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace metac::frontend {

enum class TokenKind {
  Eof,
  Error,
  Identifier,
  Integer,
  Float,
  String,
  // Keywords.
  KwModel,
  KwBlock,
  KwTasks,
  KwTrain,
  KwReturn,
  KwRepeat,
  KwConst,
  // Punctuation.
  LParen,
  RParen,
  LBrace,
  RBrace,
  LBracket,
  RBracket,
  Comma,
  Equal,
  Arrow,
  Colon,
  Plus,
  Minus,
  Star,
  Slash,
};

/// A human-readable name of a token kind for "expected X" messages.
llvm::StringRef getTokenKindName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef spelling;
  SourceLoc loc;
  /// Whether the token is the first on its line (statement recovery uses it).
  bool atLineStart = false;
  /// Integer and float values; string contents without quotes and escapes.
  int64_t intValue = 0;
  double floatValue = 0;
  std::string stringValue;

  bool is(TokenKind k) const { return kind == k; }
};

class Lexer {
public:
  Lexer(llvm::StringRef buffer, SourceDiagnostics &diags)
      : buffer(buffer), diags(diags) {}

  /// The next token; `Eof` forever once the input is exhausted.
  Token next();

private:
  char peek(size_t ahead = 0) const {
    return pos + ahead < buffer.size() ? buffer[pos + ahead] : '\0';
  }
  bool atEnd() const { return pos >= buffer.size(); }
  void advance();
  void skipWhitespaceAndComments();
  Token makeToken(TokenKind kind, size_t start, SourceLoc loc);
  Token lexNumber(size_t start, SourceLoc loc);
  Token lexString(size_t start, SourceLoc loc);
  Token lexIdentifier(size_t start, SourceLoc loc);

  llvm::StringRef buffer;
  SourceDiagnostics &diags;
  size_t pos = 0;
  unsigned line = 1, column = 1;
  bool sawNewline = true;
};

} // namespace metac::frontend

#endif // METAC_FRONTEND_LEXER_H
