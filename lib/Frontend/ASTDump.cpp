//===- ASTDump.cpp - print the spec syntax tree ---------------------------===//

#include "metac/Frontend/AST.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

using namespace metac::frontend;

namespace {

class ASTDumper {
public:
  explicit ASTDumper(llvm::raw_ostream &os) : os(os) {}

  void dump(const Module &module) {
    for (const ConstDecl &constant : module.constants) {
      line() << "Const " << constant.name << ' ' << loc(constant.loc) << '\n';
      Indent indent(*this);
      dump(*constant.value);
    }
    for (const FunctionDecl &fn : module.functions)
      dump(fn);
    for (const TasksDecl &tasks : module.tasks) {
      line() << "Tasks " << tasks.name << " = " << tasks.kind << ' '
             << loc(tasks.loc) << '\n';
      dumpFields(tasks.fields);
    }
    for (const TrainDecl &train : module.trains) {
      line() << "Train " << train.name << ' ' << loc(train.loc) << '\n';
      dumpFields(train.fields);
    }
  }

private:
  struct Indent {
    Indent(ASTDumper &d) : d(d) { ++d.depth; }
    ~Indent() { --d.depth; }
    ASTDumper &d;
  };

  llvm::raw_ostream &line() { return os.indent(2 * depth); }

  static std::string loc(SourceLoc l) {
    return "@" + std::to_string(l.line) + ":" + std::to_string(l.column);
  }

  static std::string type(const TypeSpec &t) {
    std::string s = t.elementType + "[";
    for (auto [i, d] : llvm::enumerate(t.shape))
      s += (i ? ", " : "") + std::to_string(d);
    return s + "]";
  }

  void dump(const FunctionDecl &fn) {
    line() << (fn.isBlock ? "Block " : "Model ") << fn.name << '(';
    llvm::interleaveComma(fn.params, os, [&](const Param &p) {
      os << p.name;
      if (p.type)
        os << ": " << type(*p.type);
    });
    os << ')';
    if (fn.resultType)
      os << " -> " << type(*fn.resultType);
    os << ' ' << loc(fn.loc) << '\n';
    Indent indent(*this);
    for (const StmtPtr &stmt : fn.body)
      dump(*stmt);
  }

  void dump(const Stmt &stmt) {
    llvm::TypeSwitch<const Stmt *>(&stmt)
        .Case([&](const AssignStmt *s) {
          line() << "Assign " << s->name << ' ' << loc(s->getLoc()) << '\n';
          Indent indent(*this);
          dump(*s->value);
        })
        .Case([&](const ReturnStmt *s) {
          line() << "Return " << loc(s->getLoc()) << '\n';
          Indent indent(*this);
          dump(*s->value);
        })
        .Case([&](const RepeatStmt *s) {
          line() << "Repeat " << s->count;
          if (!s->countName.empty())
            os << " (" << s->countName << ')';
          os << ' ' << loc(s->getLoc()) << '\n';
          Indent indent(*this);
          for (const StmtPtr &inner : s->body)
            dump(*inner);
        });
  }

  void dump(const Expr &expr) {
    llvm::TypeSwitch<const Expr *>(&expr)
        .Case([&](const NumberExpr *e) {
          line() << "Number ";
          if (e->isInteger)
            os << static_cast<int64_t>(e->value);
          else
            os << llvm::format("%g", e->value);
          os << ' ' << loc(e->getLoc()) << '\n';
        })
        .Case([&](const StringExpr *e) {
          line() << "String \"" << e->value << "\" " << loc(e->getLoc())
                 << '\n';
        })
        .Case([&](const NameExpr *e) {
          line() << "Name " << e->name << ' ' << loc(e->getLoc()) << '\n';
        })
        .Case([&](const ListExpr *e) {
          line() << "List " << loc(e->getLoc()) << '\n';
          Indent indent(*this);
          for (const ExprPtr &element : e->elements)
            dump(*element);
        })
        .Case([&](const CallExpr *e) {
          line() << "Call " << e->callee << ' ' << loc(e->getLoc()) << '\n';
          Indent indent(*this);
          for (const ExprPtr &arg : e->args)
            dump(*arg);
          for (const KeywordArg &kw : e->keywords) {
            line() << "Keyword " << kw.name << ' ' << loc(kw.loc) << '\n';
            Indent inner(*this);
            dump(*kw.value);
          }
        })
        .Case([&](const BinaryExpr *e) {
          line() << "Binary '" << e->op << "' " << loc(e->getLoc()) << '\n';
          Indent indent(*this);
          dump(*e->lhs);
          dump(*e->rhs);
        })
        .Case([&](const NegateExpr *e) {
          line() << "Negate " << loc(e->getLoc()) << '\n';
          Indent indent(*this);
          dump(*e->operand);
        });
  }

  void dumpFields(const std::vector<Field> &fields) {
    Indent indent(*this);
    for (const Field &field : fields) {
      line() << "Field " << field.name << ' ' << loc(field.loc);
      if (!field.value) {
        os << " (flag)\n";
        continue;
      }
      os << '\n';
      Indent inner(*this);
      dump(*field.value);
    }
  }

  void dump(const ConfigValue &value) {
    switch (value.kind) {
    case ConfigValue::Kind::Integer:
      line() << "Integer " << value.intValue << ' ' << loc(value.loc) << '\n';
      return;
    case ConfigValue::Kind::Float:
      line() << "Float " << llvm::format("%g", value.floatValue) << ' '
             << loc(value.loc) << '\n';
      return;
    case ConfigValue::Kind::String:
      line() << "String \"" << value.text << "\" " << loc(value.loc) << '\n';
      return;
    case ConfigValue::Kind::Name:
      line() << "Name " << value.text << ' ' << loc(value.loc) << '\n';
      return;
    case ConfigValue::Kind::List: {
      line() << "List " << loc(value.loc) << '\n';
      Indent indent(*this);
      for (const ConfigValuePtr &element : value.elements)
        dump(*element);
      return;
    }
    case ConfigValue::Kind::Record:
      line() << "Record";
      if (!value.text.empty())
        os << ' ' << value.text;
      os << ' ' << loc(value.loc) << '\n';
      dumpFields(value.fields);
      return;
    }
  }

  llvm::raw_ostream &os;
  unsigned depth = 0;
};

} // namespace

void metac::frontend::dumpAST(const Module &module, llvm::raw_ostream &os) {
  ASTDumper(os).dump(module);
}
