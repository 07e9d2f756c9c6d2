//===- Overrides.cpp - `--set PATH=VALUE` on a parsed spec ----------------===//

#include "metac/Frontend/Parser.h"
#include "metac/Frontend/Resolve.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace metac::frontend;

namespace {

/// The field `name` of `fields`, or null.
Field *findField(std::vector<Field> &fields, llvm::StringRef name) {
  for (Field &field : fields)
    if (field.name == name)
      return &field;
  return nullptr;
}

/// Names of the declarations a path may start with, for the error message.
std::string describeRoots(const Module &module) {
  llvm::SmallVector<std::string> names;
  for (const ConstDecl &constant : module.constants)
    names.push_back(constant.name);
  for (const TasksDecl &tasks : module.tasks)
    names.push_back(tasks.name);
  for (const TrainDecl &train : module.trains)
    names.push_back(train.name);
  return names.empty() ? "none" : llvm::join(names, ", ");
}

mlir::LogicalResult applyOne(Module &module, llvm::StringRef setting,
                             mlir::MLIRContext *context) {
  SourceDiagnostics diags(context, ("--set " + setting).str());
  auto fail = [&](const llvm::Twine &message) {
    diags.error({1, 1}, message);
    return mlir::failure();
  };
  auto [path, text] = setting.split('=');
  path = path.trim();
  if (!setting.contains('=') || path.empty())
    return fail("expected PATH=VALUE, such as "
                "maml_sine.meta_batch=50 or width=160");
  Parser parser(text, diags);
  ConfigValuePtr value = parser.parseStandaloneValue();
  if (!value || diags.getErrorCount())
    return mlir::failure();

  llvm::SmallVector<llvm::StringRef> parts;
  path.split(parts, '.');
  llvm::StringRef root = parts.front();
  for (ConstDecl &constant : module.constants) {
    if (constant.name != root)
      continue;
    if (parts.size() > 1)
      return fail("constant '" + root + "' has no fields");
    if (!value->isNumber())
      return fail("constant '" + root + "' must be set to a number");
    value->loc = constant.value->loc;
    constant.value = std::move(value);
    return mlir::success();
  }
  std::vector<Field> *fields = nullptr;
  for (TasksDecl &tasks : module.tasks)
    if (tasks.name == root)
      fields = &tasks.fields;
  for (TrainDecl &train : module.trains)
    if (train.name == root)
      fields = &train.fields;
  if (!fields)
    return fail("no constant, task distribution or training "
                "program named '" +
                root + "' (the spec has: " + describeRoots(module) + ")");
  if (parts.size() < 2)
    return fail("'" + root +
                "' is a declaration: name one of its "
                "fields, such as " +
                root + ".seed");
  for (llvm::StringRef name : llvm::ArrayRef(parts).drop_front().drop_back()) {
    Field *field = findField(*fields, name);
    if (!field || !field->value ||
        field->value->kind != ConfigValue::Kind::Record)
      return fail("'" + name +
                  "' is not a record field on the way "
                  "to '" +
                  path + "'");
    fields = &field->value->fields;
  }
  // The setting takes the place (and the location) of the field it replaces,
  // so later errors point into the spec where the field was.
  llvm::StringRef last = parts.back();
  if (Field *field = findField(*fields, last)) {
    if (field->value)
      value->loc = field->value->loc;
    field->value = std::move(value);
    return mlir::success();
  }
  Field added;
  added.name = last.str();
  added.loc = value->loc;
  added.value = std::move(value);
  fields->push_back(std::move(added));
  return mlir::success();
}

} // namespace

mlir::LogicalResult
metac::frontend::applyOverrides(Module &module,
                                llvm::ArrayRef<std::string> settings,
                                mlir::MLIRContext *context) {
  bool ok = true;
  for (const std::string &setting : settings)
    ok &= mlir::succeeded(applyOne(module, setting, context));
  return mlir::success(ok);
}
