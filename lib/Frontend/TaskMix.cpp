//===- TaskMix.cpp - `mix { ... }`: task classes of different cost -------===//
//
// A training program may draw its meta-batch from several task classes,
// each with its own support and query sizes and inner steps:
//
//   mix {
//     short = { tasks = 6, support = 5,  steps = 1 }
//     long  = { tasks = 2, support = 20, steps = 5 }
//   }
//
// Every meta-batch holds exactly `tasks` tasks of each class (stratified
// sampling: shapes stay static). Classification classes give `shots` and
// `query` per class instead of sample counts. The classes become
// `meta.task_mix` on the train op, which the expand phase turns into one batch
// per class and the task axis balances by cost.
//
//===----------------------------------------------------------------------===//

#include "DeclGen.h"
#include "GenUtils.h"

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

ArrayAttr metac::frontend::readTaskMix(const Field &field,
                                       SourceDiagnostics &diags, OpBuilder &b,
                                       meta::TasksOp tasks, Attribute algorithm,
                                       int64_t metaBatch) {
  const ConfigValue &record = *field.value;
  if (record.fields.empty()) {
    diags.error(field.loc) << "'mix' needs at least one task class, such as "
                              "short = { tasks = 4, support = 5 }";
    return nullptr;
  }
  std::optional<int64_t> defaultSteps;
  if (auto maml = dyn_cast<meta::MAMLAttr>(algorithm))
    defaultSteps = maml.getSteps();
  else if (auto anil = dyn_cast<meta::ANILAttr>(algorithm))
    defaultSteps = anil.getSteps();
  else if (auto metasgd = dyn_cast<meta::MetaSGDAttr>(algorithm))
    defaultSteps = metasgd.getSteps();
  // ProtoNets has no inner steps: its classes differ in sizes alone.
  bool prototypes = isa<meta::ProtoNetAttr>(algorithm);
  if (prototypes)
    defaultSteps = 0;
  if (!defaultSteps) {
    diags.error(field.loc) << "'mix' needs maml, anil, metasgd or protonet "
                              "(Reptile and iMAML average whole tasks' "
                              "updates, which a mix does not weigh yet)";
    return nullptr;
  }
  StringRef kind = tasks.getKind();
  // Classification classes give shots and queries per class (the
  // distribution's ways stay: they are the model's outputs).
  bool episodic = kind == "fashion_mnist" || kind == "image_folder";
  if (kind != "sinusoid" && kind != "sequence" && !episodic) {
    diags.error(field.loc)
        << "'mix' draws sinusoid, sequence, fashion_mnist or image_folder "
        << "tasks; task distribution '" << tasks.getSymName() << "' is " << kind
        << " (fixed episodes)";
    return nullptr;
  }
  int64_t ways = episodic ? tasks.getWaysAttr().getInt() : 1;
  int64_t shots = 1;
  if (auto config = tasks.getConfig())
    if (auto s = config.getAs<IntegerAttr>("shots"))
      shots = s.getInt();
  SmallVector<Attribute> classes;
  llvm::StringSet<> seen;
  int64_t total = 0;
  bool failed = false;
  for (const Field &entry : record.fields) {
    if (!entry.value || entry.value->kind != ConfigValue::Kind::Record ||
        !entry.value->text.empty()) {
      diags.error(entry.loc)
          << "task class '" << entry.name
          << "' expects a record such as { tasks = 4, support = 5 }";
      failed = true;
      continue;
    }
    if (!seen.insert(entry.name).second) {
      diags.error(entry.loc)
          << "task class '" << entry.name << "' is given twice";
      failed = true;
      continue;
    }
    SmallVector<StringRef> known = {"tasks", episodic ? "shots" : "support",
                                    "query"};
    if (!prototypes)
      known.push_back("steps");
    FieldReader r(diags, entry.value->fields, "task class '" + entry.name + "'",
                  entry.value->loc, known);
    auto count = r.integer("tasks", std::nullopt, 1);
    // In samples: a classification class's shots and queries per class
    // times the ways.
    auto support = episodic ? r.integer("shots", shots, 1)
                            : r.integer("support", tasks.getSupport(), 1);
    auto query = r.integer("query", tasks.getQuery() / ways, 1);
    auto steps = r.integer("steps", *defaultSteps, 0);
    if (r.hadError() || !count || !support || !query || !steps) {
      failed = true;
      continue;
    }
    if (*count > metaBatch || *support > (1 << 20) || *query > (1 << 20) ||
        *steps > 1024) {
      diags.error(entry.loc)
          << "task class '" << entry.name << "' is too large (at most "
          << "meta_batch tasks, 2^20 samples and 1024 steps)";
      failed = true;
      continue;
    }
    total += *count;
    *support *= ways;
    *query *= ways;
    classes.push_back(b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(entry.name)),
        b.getNamedAttr("tasks", b.getI64IntegerAttr(*count)),
        b.getNamedAttr("support", b.getI64IntegerAttr(*support)),
        b.getNamedAttr("query", b.getI64IntegerAttr(*query)),
        b.getNamedAttr("steps", b.getI64IntegerAttr(*steps)),
    }));
  }
  if (failed)
    return nullptr;
  if (total != metaBatch) {
    diags.error(field.loc) << "the task classes of 'mix' hold " << total
                           << " tasks, but meta_batch is " << metaBatch;
    return nullptr;
  }
  return b.getArrayAttr(classes);
}
