//===- AST.h - spec language syntax tree ------------------------*- C++ -*-===//
//
// The syntax tree of a spec: declarations of models, blocks, task
// distributions and training programs. Model bodies are expressions and
// statements; everything else is a tree of configuration values (numbers,
// strings, names, lists, records and constructors such as `maml { ... }`).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_FRONTEND_AST_H
#define METAC_FRONTEND_AST_H

#include "metac/Frontend/SourceDiagnostics.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace metac::frontend {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

/// A per-sample tensor type as written: `f32[1, 28, 28]`, `i64[16]`, `f32`.
struct TypeSpec {
  std::string elementType;
  std::vector<int64_t> shape;
  SourceLoc loc;
};

//===----------------------------------------------------------------------===//
// Expressions and statements (model and block bodies)
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind { Number, String, Name, Call, Binary, Negate, List };
  Expr(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  SourceLoc getLoc() const { return loc; }

private:
  Kind kind;
  SourceLoc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

struct NumberExpr : Expr {
  NumberExpr(SourceLoc loc, double value, bool isInteger)
      : Expr(Kind::Number, loc), value(value), isInteger(isInteger) {}
  double value;
  bool isInteger;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Number; }
};

/// A string argument, such as a layer's `name = "fc1"`.
struct StringExpr : Expr {
  StringExpr(SourceLoc loc, std::string value)
      : Expr(Kind::String, loc), value(std::move(value)) {}
  std::string value;
  static bool classof(const Expr *e) { return e->getKind() == Kind::String; }
};

struct NameExpr : Expr {
  NameExpr(SourceLoc loc, std::string name)
      : Expr(Kind::Name, loc), name(std::move(name)) {}
  std::string name;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Name; }
};

/// `[a, b, c]` inside a model: shapes and dimension lists of calls.
struct ListExpr : Expr {
  ListExpr(SourceLoc loc, std::vector<ExprPtr> elements)
      : Expr(Kind::List, loc), elements(std::move(elements)) {}
  std::vector<ExprPtr> elements;
  static bool classof(const Expr *e) { return e->getKind() == Kind::List; }
};

struct KeywordArg {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
};

/// `callee(positional..., name = value...)`: a layer, a function or a block.
struct CallExpr : Expr {
  CallExpr(SourceLoc loc, std::string callee, std::vector<ExprPtr> args,
           std::vector<KeywordArg> keywords)
      : Expr(Kind::Call, loc), callee(std::move(callee)), args(std::move(args)),
        keywords(std::move(keywords)) {}
  std::string callee;
  std::vector<ExprPtr> args;
  std::vector<KeywordArg> keywords;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Call; }
};

struct BinaryExpr : Expr {
  BinaryExpr(SourceLoc loc, char op, ExprPtr lhs, ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  char op; // one of + - * /
  ExprPtr lhs, rhs;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Binary; }
};

struct NegateExpr : Expr {
  NegateExpr(SourceLoc loc, ExprPtr operand)
      : Expr(Kind::Negate, loc), operand(std::move(operand)) {}
  ExprPtr operand;
  static bool classof(const Expr *e) { return e->getKind() == Kind::Negate; }
};

class Stmt {
public:
  enum class Kind { Assign, Return, Repeat };
  Stmt(Kind kind, SourceLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  SourceLoc getLoc() const { return loc; }

private:
  Kind kind;
  SourceLoc loc;
};
using StmtPtr = std::unique_ptr<Stmt>;

struct AssignStmt : Stmt {
  AssignStmt(SourceLoc loc, std::string name, ExprPtr value)
      : Stmt(Kind::Assign, loc), name(std::move(name)),
        value(std::move(value)) {}
  std::string name;
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Assign; }
};

struct ReturnStmt : Stmt {
  ReturnStmt(SourceLoc loc, ExprPtr value)
      : Stmt(Kind::Return, loc), value(std::move(value)) {}
  ExprPtr value;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Return; }
};

/// `repeat N { ... }`: N copies of the body, each with its own parameters.
/// N is an integer or the name of a constant (`repeat depth { ... }`),
/// replaced by its value before code generation.
struct RepeatStmt : Stmt {
  RepeatStmt(SourceLoc loc, int64_t count, std::vector<StmtPtr> body)
      : Stmt(Kind::Repeat, loc), count(count), body(std::move(body)) {}
  int64_t count;
  std::string countName; // empty when N was written as a number
  SourceLoc countLoc;
  std::vector<StmtPtr> body;
  static bool classof(const Stmt *s) { return s->getKind() == Kind::Repeat; }
};

//===----------------------------------------------------------------------===//
// Configuration values (tasks and train declarations)
//===----------------------------------------------------------------------===//

struct ConfigValue;
using ConfigValuePtr = std::unique_ptr<ConfigValue>;

struct Field {
  std::string name;
  SourceLoc loc;
  /// Null for a bare flag such as `auto`.
  ConfigValuePtr value;
};

struct ConfigValue {
  enum class Kind { Integer, Float, String, Name, List, Record };
  Kind kind;
  SourceLoc loc;
  int64_t intValue = 0;
  double floatValue = 0;
  /// String contents, or the name for `Name` and for constructors
  /// (`maml { ... }` is a Record whose `name` is "maml").
  std::string text;
  std::vector<ConfigValuePtr> elements; // List
  std::vector<Field> fields;            // Record

  bool isNumber() const { return kind == Kind::Integer || kind == Kind::Float; }
  double asDouble() const {
    return kind == Kind::Integer ? static_cast<double>(intValue) : floatValue;
  }
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

struct Param {
  std::string name;
  SourceLoc loc;
  /// Absent for untyped block parameters (their type comes from the call).
  std::optional<TypeSpec> type;
};

/// `model NAME(params) -> type { ... }` or `block NAME(params) { ... }`.
struct FunctionDecl {
  bool isBlock = false;
  std::string name;
  SourceLoc loc;
  std::vector<Param> params;
  std::optional<TypeSpec> resultType;
  std::vector<StmtPtr> body;
};

/// `tasks NAME = KIND { fields }`.
struct TasksDecl {
  std::string name;
  SourceLoc loc;
  std::string kind;
  SourceLoc kindLoc;
  std::vector<Field> fields;
};

/// `train NAME { fields }`.
struct TrainDecl {
  std::string name;
  SourceLoc loc;
  std::vector<Field> fields;
};

/// `const NAME = NUMBER`: a number that model bodies, repeat counts and
/// fields use by name, and that `--set NAME=VALUE` replaces.
struct ConstDecl {
  std::string name;
  SourceLoc loc;
  ConfigValuePtr value; // Integer or Float
};

struct Module {
  std::vector<ConstDecl> constants;
  std::vector<FunctionDecl> functions;
  std::vector<TasksDecl> tasks;
  std::vector<TrainDecl> trains;
};

/// Prints the tree in an indented, line-per-node form (`--compile-to=ast`).
void dumpAST(const Module &module, llvm::raw_ostream &os);

} // namespace metac::frontend

#endif // METAC_FRONTEND_AST_H
