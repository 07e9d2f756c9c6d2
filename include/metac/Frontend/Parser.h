//===- Parser.h - spec language parser --------------------------*- C++ -*-===//
//
// A recursive-descent parser that recovers from errors: after an error it
// skips to the next statement, field or declaration and goes on, so one run
// reports several errors. Nesting is bounded, so no input exhausts the stack.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_FRONTEND_PARSER_H
#define METAC_FRONTEND_PARSER_H

#include "metac/Frontend/AST.h"
#include "metac/Frontend/Lexer.h"

#include <optional>

namespace metac::frontend {

class Parser {
public:
  Parser(llvm::StringRef buffer, SourceDiagnostics &diags)
      : lexer(buffer, diags), diags(diags) {
    lookahead = lexer.next();
    consume();
  }

  /// Parses the whole spec. The module holds every declaration that parsed;
  /// check `diags.getErrorCount()` to know whether the spec is valid.
  Module parseModule();

  /// Parses the whole buffer as one configuration value (the VALUE of
  /// `--set PATH=VALUE`); null after an error.
  ConfigValuePtr parseStandaloneValue();

  /// The deepest nesting of brackets and expressions accepted.
  static constexpr unsigned kMaxNesting = 128;

private:
  // Declarations.
  void parseDeclaration(Module &module);
  std::optional<FunctionDecl> parseFunction(bool isBlock);
  std::optional<TasksDecl> parseTasks();
  std::optional<TrainDecl> parseTrain();
  std::optional<ConstDecl> parseConst();
  /// An identifier naming a declaration (or a kind), reported as `what`.
  bool parseName(llvm::StringRef what, std::string &name, SourceLoc &loc);
  /// `{ fields }`, reported as opening `what`.
  bool parseRecord(llvm::StringRef what, std::vector<Field> &fields);
  std::optional<Param> parseParam();
  std::optional<TypeSpec> parseType();

  // Statements and expressions.
  bool parseBody(std::vector<StmtPtr> &body, llvm::StringRef what);
  StmtPtr parseStatement();
  ExprPtr parseExpr();
  ExprPtr parseTerm();
  ExprPtr parseUnary();
  ExprPtr parsePrimary();
  ExprPtr parseCallRest(std::string callee, SourceLoc loc);

  // Configuration values.
  bool parseRecordBody(std::vector<Field> &fields, SourceLoc open);
  std::optional<Field> parseField();
  ConfigValuePtr parseValue();

  // Token handling.
  void consume() {
    tok = std::move(lookahead);
    lookahead = tok.is(TokenKind::Eof) ? tok : lexer.next();
  }
  /// Whether the current token starts a declaration (`model NAME`, ...),
  /// which inside a body or record means a '}' is missing.
  bool atDeclarationStart() const;
  bool isIdentLike() const;
  bool consumeIf(TokenKind kind);
  bool expect(TokenKind kind, llvm::StringRef context);
  void errorExpected(llvm::StringRef what);
  void skipToDeclaration();
  void skipToStatementEnd();
  bool tooManyErrors() const {
    return diags.getErrorCount() > SourceDiagnostics::kMaxErrors;
  }

  /// Counts nesting; reports once and fails past kMaxNesting.
  struct NestingGuard {
    NestingGuard(Parser &parser);
    ~NestingGuard() { --parser.nesting; }
    bool ok;
    Parser &parser;
  };

  Lexer lexer;
  SourceDiagnostics &diags;
  Token tok, lookahead;
  unsigned nesting = 0;
  bool reportedNesting = false;
};

} // namespace metac::frontend

#endif // METAC_FRONTEND_PARSER_H
