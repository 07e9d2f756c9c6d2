//===- Parser.cpp - spec language parser ----------------------------------===//

#include "metac/Frontend/Parser.h"

#include "llvm/ADT/ScopeExit.h"

using namespace metac::frontend;

Parser::NestingGuard::NestingGuard(Parser &parser) : parser(parser) {
  ok = ++parser.nesting <= kMaxNesting;
  if (!ok && !parser.reportedNesting) {
    parser.reportedNesting = true;
    parser.diags.error(parser.tok.loc)
        << "nesting is too deep (the limit is " << kMaxNesting << " levels)";
  }
}

//===----------------------------------------------------------------------===//
// Token handling
//===----------------------------------------------------------------------===//

bool Parser::isIdentLike() const {
  switch (tok.kind) {
  case TokenKind::Identifier:
  case TokenKind::KwModel:
  case TokenKind::KwBlock:
  case TokenKind::KwTasks:
  case TokenKind::KwTrain:
  case TokenKind::KwReturn:
  case TokenKind::KwRepeat:
  case TokenKind::KwConst:
    return true;
  default:
    return false;
  }
}

bool Parser::consumeIf(TokenKind kind) {
  if (!tok.is(kind))
    return false;
  consume();
  return true;
}

void Parser::errorExpected(llvm::StringRef what) {
  // The lexer has already reported a malformed token; don't pile on.
  if (tok.is(TokenKind::Error) || reportedNesting)
    return;
  if (tok.is(TokenKind::Eof))
    diags.error(tok.loc) << "expected " << what << ", found end of file";
  else
    diags.error(tok.loc) << "expected " << what << ", found '" << tok.spelling
                         << "'";
}

bool Parser::expect(TokenKind kind, llvm::StringRef context) {
  if (consumeIf(kind))
    return true;
  errorExpected((getTokenKindName(kind) + " " + context).str());
  return false;
}

static bool isDeclarationKeyword(const Token &tok) {
  return tok.is(TokenKind::KwModel) || tok.is(TokenKind::KwBlock) ||
         tok.is(TokenKind::KwTasks) || tok.is(TokenKind::KwTrain) ||
         tok.is(TokenKind::KwConst);
}

bool Parser::atDeclarationStart() const {
  return tok.atLineStart && isDeclarationKeyword(tok) &&
         lookahead.is(TokenKind::Identifier);
}

void Parser::skipToDeclaration() {
  do {
    consume();
  } while (!tok.is(TokenKind::Eof) && !atDeclarationStart());
}

/// Whether a statement or field that failed at `tok` after starting at
/// `start` has already reached the first token of a later line (a missing ')'
/// at the end of a line, or a declaration after a missing '}'): recovery goes
/// on from there instead of skipping that line too.
static bool resumesAtNextLine(const Token &tok, SourceLoc start) {
  return tok.atLineStart &&
         (tok.loc.line != start.line || tok.loc.column != start.column);
}

void Parser::skipToStatementEnd() {
  // Skip to the first token of the next line, or to the '}' that closes the
  // enclosing body, balancing brackets on the way.
  int depth = 0;
  while (!tok.is(TokenKind::Eof)) {
    if (depth == 0 && tok.is(TokenKind::RBrace))
      return;
    if (tok.is(TokenKind::LParen) || tok.is(TokenKind::LBracket) ||
        tok.is(TokenKind::LBrace))
      ++depth;
    if (tok.is(TokenKind::RParen) || tok.is(TokenKind::RBracket) ||
        tok.is(TokenKind::RBrace))
      depth = std::max(0, depth - 1);
    consume();
    if (depth == 0 && tok.atLineStart)
      return;
  }
}

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

Module Parser::parseModule() {
  Module module;
  // Past the nesting limit the parser stops: it no longer knows where it is.
  while (!tok.is(TokenKind::Eof) && !tooManyErrors() && !reportedNesting)
    parseDeclaration(module);
  return module;
}

void Parser::parseDeclaration(Module &module) {
  unsigned errorsBefore = diags.getErrorCount();
  switch (tok.kind) {
  case TokenKind::KwModel:
  case TokenKind::KwBlock:
    if (auto fn = parseFunction(tok.is(TokenKind::KwBlock)))
      module.functions.push_back(std::move(*fn));
    break;
  case TokenKind::KwTasks:
    if (auto tasks = parseTasks())
      module.tasks.push_back(std::move(*tasks));
    break;
  case TokenKind::KwTrain:
    if (auto train = parseTrain())
      module.trains.push_back(std::move(*train));
    break;
  case TokenKind::KwConst:
    if (auto constant = parseConst())
      module.constants.push_back(std::move(*constant));
    break;
  default:
    if (!tok.is(TokenKind::Error))
      diags.error(tok.loc) << "expected a declaration ('model', 'block', "
                              "'tasks', 'train' or 'const'), found '"
                           << tok.spelling << "'";
    skipToDeclaration();
    return;
  }
  if (diags.getErrorCount() != errorsBefore && !tok.is(TokenKind::Eof) &&
      !atDeclarationStart())
    skipToDeclaration();
}

std::optional<FunctionDecl> Parser::parseFunction(bool isBlock) {
  FunctionDecl fn;
  fn.isBlock = isBlock;
  fn.loc = tok.loc;
  consume(); // 'model' or 'block'
  if (!tok.is(TokenKind::Identifier)) {
    errorExpected(isBlock ? "a block name" : "a model name");
    return std::nullopt;
  }
  fn.name = tok.spelling.str();
  fn.loc = tok.loc;
  consume();
  if (!expect(TokenKind::LParen, "after the name"))
    return std::nullopt;
  if (!tok.is(TokenKind::RParen)) {
    do {
      std::optional<Param> param = parseParam();
      if (!param)
        return std::nullopt;
      if (!isBlock && !param->type) {
        diags.error(param->loc)
            << "model parameter '" << param->name << "' needs a type";
        return std::nullopt;
      }
      for (const Param &previous : fn.params) {
        if (previous.name != param->name)
          continue;
        mlir::InFlightDiagnostic diag = diags.error(param->loc);
        diag << "duplicate parameter '" << param->name << "'";
        diag.attachNote(diags.getLocation(previous.loc)) << "first given here";
        break;
      }
      fn.params.push_back(std::move(*param));
    } while (consumeIf(TokenKind::Comma));
  }
  if (!expect(TokenKind::RParen, "to close the parameter list"))
    return std::nullopt;
  if (consumeIf(TokenKind::Arrow)) {
    fn.resultType = parseType();
    if (!fn.resultType)
      return std::nullopt;
  } else if (!isBlock) {
    errorExpected("'->' and the model's result type");
    return std::nullopt;
  }
  if (!parseBody(fn.body, isBlock ? "block" : "model"))
    return std::nullopt;
  return fn;
}

std::optional<Param> Parser::parseParam() {
  if (!tok.is(TokenKind::Identifier)) {
    errorExpected("a parameter name");
    return std::nullopt;
  }
  Param param{tok.spelling.str(), tok.loc, std::nullopt};
  consume();
  if (consumeIf(TokenKind::Colon)) {
    param.type = parseType();
    if (!param.type)
      return std::nullopt;
  }
  return param;
}

std::optional<TypeSpec> Parser::parseType() {
  if (!tok.is(TokenKind::Identifier)) {
    errorExpected("a type such as f32[1, 28, 28]");
    return std::nullopt;
  }
  TypeSpec type;
  type.elementType = tok.spelling.str();
  type.loc = tok.loc;
  consume();
  if (!consumeIf(TokenKind::LBracket))
    return type;
  if (!tok.is(TokenKind::RBracket)) {
    do {
      if (!tok.is(TokenKind::Integer)) {
        errorExpected("a dimension size");
        return std::nullopt;
      }
      type.shape.push_back(tok.intValue);
      consume();
    } while (consumeIf(TokenKind::Comma));
  }
  if (!expect(TokenKind::RBracket, "to close the shape"))
    return std::nullopt;
  return type;
}

bool Parser::parseName(llvm::StringRef what, std::string &name,
                       SourceLoc &loc) {
  if (!tok.is(TokenKind::Identifier)) {
    errorExpected(what);
    return false;
  }
  name = tok.spelling.str();
  loc = tok.loc;
  consume();
  return true;
}

bool Parser::parseRecord(llvm::StringRef what, std::vector<Field> &fields) {
  SourceLoc open = tok.loc;
  return expect(TokenKind::LBrace, ("to open " + what).str()) &&
         parseRecordBody(fields, open);
}

std::optional<TasksDecl> Parser::parseTasks() {
  TasksDecl decl;
  consume(); // 'tasks'
  if (!parseName("a task distribution name", decl.name, decl.loc) ||
      !expect(TokenKind::Equal, "after the task distribution name") ||
      !parseName("a task distribution kind such as 'sinusoid'", decl.kind,
                 decl.kindLoc) ||
      !parseRecord("the task distribution's fields", decl.fields))
    return std::nullopt;
  return decl;
}

std::optional<TrainDecl> Parser::parseTrain() {
  TrainDecl decl;
  consume(); // 'train'
  if (!parseName("a training program name", decl.name, decl.loc) ||
      !parseRecord("the training program", decl.fields))
    return std::nullopt;
  return decl;
}

std::optional<ConstDecl> Parser::parseConst() {
  ConstDecl decl;
  consume(); // 'const'
  if (!parseName("a constant name", decl.name, decl.loc) ||
      !expect(TokenKind::Equal, "after the constant name"))
    return std::nullopt;
  SourceLoc valueLoc = tok.loc;
  decl.value = parseValue();
  if (!decl.value)
    return std::nullopt;
  if (!decl.value->isNumber()) {
    diags.error(valueLoc) << "a constant must be a number";
    return std::nullopt;
  }
  return decl;
}

ConfigValuePtr Parser::parseStandaloneValue() {
  ConfigValuePtr value = parseValue();
  if (value && !tok.is(TokenKind::Eof)) {
    errorExpected("the end of the value");
    return nullptr;
  }
  return value;
}

//===----------------------------------------------------------------------===//
// Statements and expressions
//===----------------------------------------------------------------------===//

bool Parser::parseBody(std::vector<StmtPtr> &body, llvm::StringRef what) {
  NestingGuard guard(*this);
  if (!guard.ok)
    return false;
  SourceLoc open = tok.loc;
  if (!expect(TokenKind::LBrace, ("to open the " + what + " body").str()))
    return false;
  bool ok = true;
  while (!tok.is(TokenKind::RBrace)) {
    if (tok.is(TokenKind::Eof)) {
      mlir::InFlightDiagnostic diag = diags.error(tok.loc);
      diag << "expected '}' to close the " << what
           << " body, found end of file";
      diag.attachNote(diags.getLocation(open))
          << "the " << what << " body opens here";
      return false;
    }
    if (tooManyErrors() || reportedNesting)
      return false;
    // A declaration keyword at the start of a line means a missing '}'.
    if (atDeclarationStart()) {
      mlir::InFlightDiagnostic diag = diags.error(tok.loc);
      diag << "expected '}' to close the " << what
           << " body before this declaration";
      diag.attachNote(diags.getLocation(open))
          << "the " << what << " body opens here";
      return false;
    }
    SourceLoc start = tok.loc;
    if (StmtPtr stmt = parseStatement()) {
      body.push_back(std::move(stmt));
    } else {
      ok = false;
      if (!resumesAtNextLine(tok, start))
        skipToStatementEnd();
    }
  }
  consume(); // '}'
  return ok;
}

StmtPtr Parser::parseStatement() {
  SourceLoc loc = tok.loc;
  if (consumeIf(TokenKind::KwReturn)) {
    ExprPtr value = parseExpr();
    if (!value)
      return nullptr;
    return std::make_unique<ReturnStmt>(loc, std::move(value));
  }
  if (consumeIf(TokenKind::KwRepeat)) {
    if (!tok.is(TokenKind::Integer) && !tok.is(TokenKind::Identifier)) {
      errorExpected("a repeat count (an integer or a constant's name)");
      return nullptr;
    }
    int64_t count = tok.is(TokenKind::Integer) ? tok.intValue : 0;
    std::string countName =
        tok.is(TokenKind::Identifier) ? tok.spelling.str() : "";
    SourceLoc countLoc = tok.loc;
    consume();
    std::vector<StmtPtr> body;
    if (!parseBody(body, "repeat"))
      return nullptr;
    auto repeat = std::make_unique<RepeatStmt>(loc, count, std::move(body));
    repeat->countName = std::move(countName);
    repeat->countLoc = countLoc;
    return repeat;
  }
  if (!tok.is(TokenKind::Identifier)) {
    errorExpected("a statement ('name = expression', 'return' or 'repeat')");
    return nullptr;
  }
  std::string name = tok.spelling.str();
  consume();
  if (!expect(TokenKind::Equal, ("after '" + name + "'").c_str()))
    return nullptr;
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  return std::make_unique<AssignStmt>(loc, std::move(name), std::move(value));
}

ExprPtr Parser::parseExpr() {
  NestingGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  // `a + b + c` nests to the left, `(a + b) + c`: each operator of a chain
  // counts as a level, so no tree is deeper than kMaxNesting and the code
  // walking it recursively cannot exhaust the stack.
  unsigned outer = nesting;
  llvm::scope_exit restore([&] { nesting = outer; });
  ExprPtr lhs = parseTerm();
  while (lhs && (tok.is(TokenKind::Plus) || tok.is(TokenKind::Minus))) {
    char op = tok.is(TokenKind::Plus) ? '+' : '-';
    SourceLoc loc = tok.loc;
    if (!NestingGuard(*this).ok)
      return nullptr;
    ++nesting;
    consume();
    ExprPtr rhs = parseTerm();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseTerm() {
  unsigned outer = nesting;
  llvm::scope_exit restore([&] { nesting = outer; });
  ExprPtr lhs = parseUnary();
  while (lhs && (tok.is(TokenKind::Star) || tok.is(TokenKind::Slash))) {
    char op = tok.is(TokenKind::Star) ? '*' : '/';
    SourceLoc loc = tok.loc;
    if (!NestingGuard(*this).ok)
      return nullptr;
    ++nesting; // One level per operator, as in parseExpr.
    consume();
    ExprPtr rhs = parseUnary();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(loc, op, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  SourceLoc loc = tok.loc;
  if (tok.is(TokenKind::Minus)) {
    // Only '-' nests here: a parenthesis is one level (in parseExpr), not two.
    NestingGuard guard(*this);
    if (!guard.ok)
      return nullptr;
    consume();
    ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    // Fold "-3" into a literal so sizes and axes can be negative numbers.
    if (auto *num = llvm::dyn_cast<NumberExpr>(operand.get()))
      return std::make_unique<NumberExpr>(loc, -num->value, num->isInteger);
    return std::make_unique<NegateExpr>(loc, std::move(operand));
  }
  return parsePrimary();
}

ExprPtr Parser::parsePrimary() {
  SourceLoc loc = tok.loc;
  switch (tok.kind) {
  case TokenKind::Integer: {
    auto e = std::make_unique<NumberExpr>(loc, tok.floatValue, true);
    consume();
    return e;
  }
  case TokenKind::Float: {
    auto e = std::make_unique<NumberExpr>(loc, tok.floatValue, false);
    consume();
    return e;
  }
  case TokenKind::String: {
    auto e = std::make_unique<StringExpr>(loc, tok.stringValue);
    consume();
    return e;
  }
  case TokenKind::Identifier: {
    std::string name = tok.spelling.str();
    consume();
    if (tok.is(TokenKind::LParen))
      return parseCallRest(std::move(name), loc);
    return std::make_unique<NameExpr>(loc, std::move(name));
  }
  case TokenKind::LParen: {
    consume();
    ExprPtr inner = parseExpr();
    if (!inner || !expect(TokenKind::RParen, "to close the parenthesis"))
      return nullptr;
    return inner;
  }
  case TokenKind::LBracket: {
    consume();
    std::vector<ExprPtr> elements;
    if (!tok.is(TokenKind::RBracket)) {
      do {
        ExprPtr e = parseExpr();
        if (!e)
          return nullptr;
        elements.push_back(std::move(e));
      } while (consumeIf(TokenKind::Comma));
    }
    if (!expect(TokenKind::RBracket, "to close the list"))
      return nullptr;
    return std::make_unique<ListExpr>(loc, std::move(elements));
  }
  default:
    errorExpected("an expression");
    return nullptr;
  }
}

ExprPtr Parser::parseCallRest(std::string callee, SourceLoc loc) {
  // Calls nest without passing through parseExpr: `f(g(h(x)))`.
  NestingGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  consume(); // '('
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> keywords;
  if (!tok.is(TokenKind::RParen)) {
    do {
      // `name = value` is a keyword argument; anything else is positional.
      if (tok.is(TokenKind::Identifier)) {
        Token name = tok;
        consume();
        if (consumeIf(TokenKind::Equal)) {
          ExprPtr value = parseExpr();
          if (!value)
            return nullptr;
          keywords.push_back({name.spelling.str(), name.loc, std::move(value)});
          continue;
        }
        if (!keywords.empty()) {
          diags.error(name.loc) << "positional argument after keyword "
                                   "arguments in call to '"
                                << callee << "'";
          return nullptr;
        }
        // Re-enter the expression grammar with the name already consumed.
        ExprPtr first =
            tok.is(TokenKind::LParen)
                ? parseCallRest(name.spelling.str(), name.loc)
                : std::make_unique<NameExpr>(name.loc, name.spelling.str());
        if (!first)
          return nullptr;
        // Finish a binary expression that starts with that name (one
        // nesting level per operator, as in parseExpr).
        unsigned outer = nesting;
        llvm::scope_exit restore([&] { nesting = outer; });
        while (tok.is(TokenKind::Plus) || tok.is(TokenKind::Minus) ||
               tok.is(TokenKind::Star) || tok.is(TokenKind::Slash)) {
          char op = tok.spelling[0];
          SourceLoc opLoc = tok.loc;
          if (!NestingGuard(*this).ok)
            return nullptr;
          ++nesting;
          consume();
          ExprPtr rhs = (op == '*' || op == '/') ? parseUnary() : parseTerm();
          if (!rhs)
            return nullptr;
          first = std::make_unique<BinaryExpr>(opLoc, op, std::move(first),
                                               std::move(rhs));
        }
        args.push_back(std::move(first));
        continue;
      }
      if (!keywords.empty()) {
        diags.error(tok.loc) << "positional argument after keyword arguments "
                                "in call to '"
                             << callee << "'";
        return nullptr;
      }
      ExprPtr arg = parseExpr();
      if (!arg)
        return nullptr;
      args.push_back(std::move(arg));
    } while (consumeIf(TokenKind::Comma));
  }
  if (!expect(TokenKind::RParen,
              ("to close the call to '" + callee + "'").c_str()))
    return nullptr;
  return std::make_unique<CallExpr>(loc, std::move(callee), std::move(args),
                                    std::move(keywords));
}

//===----------------------------------------------------------------------===//
// Configuration values
//===----------------------------------------------------------------------===//

bool Parser::parseRecordBody(std::vector<Field> &fields, SourceLoc open) {
  NestingGuard guard(*this);
  if (!guard.ok)
    return false;
  bool ok = true;
  while (!consumeIf(TokenKind::RBrace)) {
    if (tok.is(TokenKind::Eof)) {
      mlir::InFlightDiagnostic diag = diags.error(tok.loc);
      diag << "expected '}' to close the record, found end of file";
      diag.attachNote(diags.getLocation(open)) << "the record opens here";
      return false;
    }
    if (tooManyErrors() || reportedNesting)
      return false;
    if (atDeclarationStart()) {
      mlir::InFlightDiagnostic diag = diags.error(tok.loc);
      diag << "expected '}' before this declaration";
      diag.attachNote(diags.getLocation(open)) << "the record opens here";
      return false;
    }
    SourceLoc start = tok.loc;
    if (std::optional<Field> field = parseField()) {
      fields.push_back(std::move(*field));
      consumeIf(TokenKind::Comma);
    } else {
      ok = false;
      if (!resumesAtNextLine(tok, start))
        skipToStatementEnd();
    }
  }
  return ok;
}

std::optional<Field> Parser::parseField() {
  if (!isIdentLike()) {
    errorExpected("a field name");
    return std::nullopt;
  }
  Field field{tok.spelling.str(), tok.loc, nullptr};
  consume();
  if (consumeIf(TokenKind::Equal)) {
    field.value = parseValue();
    if (!field.value)
      return std::nullopt;
    return field;
  }
  if (tok.is(TokenKind::LBrace)) {
    // `evaluate { ... }`: a nested record named by the field.
    field.value = parseValue();
    if (!field.value)
      return std::nullopt;
    return field;
  }
  // A bare flag such as `auto`.
  return field;
}

ConfigValuePtr Parser::parseValue() {
  NestingGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  auto value = std::make_unique<ConfigValue>();
  value->loc = tok.loc;
  bool negate = consumeIf(TokenKind::Minus);
  if (negate && !tok.is(TokenKind::Integer) && !tok.is(TokenKind::Float)) {
    errorExpected("a number after '-'");
    return nullptr;
  }
  switch (tok.kind) {
  case TokenKind::Integer:
    value->kind = ConfigValue::Kind::Integer;
    value->intValue = negate ? -tok.intValue : tok.intValue;
    consume();
    return value;
  case TokenKind::Float:
    value->kind = ConfigValue::Kind::Float;
    value->floatValue = negate ? -tok.floatValue : tok.floatValue;
    consume();
    return value;
  case TokenKind::String:
    value->kind = ConfigValue::Kind::String;
    value->text = tok.stringValue;
    consume();
    return value;
  case TokenKind::LBracket: {
    value->kind = ConfigValue::Kind::List;
    consume();
    if (!tok.is(TokenKind::RBracket)) {
      do {
        ConfigValuePtr element = parseValue();
        if (!element)
          return nullptr;
        value->elements.push_back(std::move(element));
      } while (consumeIf(TokenKind::Comma));
    }
    if (!expect(TokenKind::RBracket, "to close the list"))
      return nullptr;
    return value;
  }
  case TokenKind::LBrace: {
    value->kind = ConfigValue::Kind::Record;
    SourceLoc open = tok.loc;
    consume();
    if (!parseRecordBody(value->fields, open))
      return nullptr;
    return value;
  }
  default:
    break;
  }
  if (!isIdentLike()) {
    errorExpected("a value (number, string, name, list or record)");
    return nullptr;
  }
  value->kind = ConfigValue::Kind::Name;
  value->text = tok.spelling.str();
  consume();
  if (tok.is(TokenKind::LBrace)) {
    // A constructor: `maml { steps = 1 }`.
    value->kind = ConfigValue::Kind::Record;
    SourceLoc open = tok.loc;
    consume();
    if (!parseRecordBody(value->fields, open))
      return nullptr;
  }
  return value;
}
