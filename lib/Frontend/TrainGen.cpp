//===- TrainGen.cpp - training programs to meta.train ---------------------===//

#include "DeclGen.h"
#include "GenUtils.h"

#include "metac/Dialect/Meta/IR/Compression.h"

#include "llvm/Support/Format.h"

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

namespace {

constexpr llvm::StringLiteral kAlgorithms[] = {
    "maml", "fomaml", "reptile", "anil", "metasgd", "protonet", "imaml"};
constexpr llvm::StringLiteral kOptimizers[] = {"sgd", "adam", "adamw"};

SmallVector<StringRef> names(ArrayRef<llvm::StringLiteral> list) {
  return SmallVector<StringRef>(list.begin(), list.end());
}

/// A constructor value (`maml { ... }` or a bare `maml`): its name and fields.
struct Constructor {
  std::string name;
  SourceLoc loc;
  const std::vector<Field> *fields;
};

std::optional<Constructor> readConstructor(FieldReader &fields,
                                           StringRef field) {
  static const std::vector<Field> kNoFields;
  const Field *f = fields.find(field);
  if (!f)
    return std::nullopt;
  const ConfigValue *v = f->value.get();
  if (v && v->kind == ConfigValue::Kind::Name)
    return Constructor{v->text, v->loc, &kNoFields};
  if (v && v->kind == ConfigValue::Kind::Record && !v->text.empty())
    return Constructor{v->text, v->loc, &v->fields};
  fields.error(*f) << "field '" << field << "' of " << fields.getWhat()
                   << " expects a name with optional fields, such as "
                   << (field == "algorithm" ? "maml { steps = 1 }"
                                            : "adam { lr = 0.001 }");
  return std::nullopt;
}

Attribute buildAlgorithm(const Constructor &c, SourceDiagnostics &diags,
                         OpBuilder &b) {
  MLIRContext *ctx = b.getContext();
  std::string what = "algorithm '" + c.name + "'";
  auto f64 = [](double v) { return llvm::APFloat(v); };
  auto emitError = [&]() { return diags.error(c.loc); };
  llvm::function_ref<InFlightDiagnostic()> emit = emitError;
  if (c.name == "maml" || c.name == "fomaml" || c.name == "metasgd") {
    bool first = c.name == "fomaml";
    SmallVector<StringRef> known = {"steps", "inner_lr"};
    if (!first)
      known.push_back("order");
    FieldReader r(diags, *c.fields, what, c.loc, known);
    // MAML takes 0 inner steps (joint training); Meta-SGD needs at least
    // one for its learned rates to matter.
    auto steps = r.integer("steps", 1, c.name == "metasgd" ? 1 : 0);
    auto lr = r.number("inner_lr", 0.01, true);
    auto order = first ? std::optional<int64_t>(1) : r.integer("order", 2, 1);
    if (r.hadError() || !steps || !lr || !order)
      return nullptr;
    if (*order > 2) {
      r.error(*r.find("order")) << "order must be 1 or 2, got " << *order;
      return nullptr;
    }
    if (c.name == "metasgd")
      return meta::MetaSGDAttr::getChecked(emit, ctx, *steps, f64(*lr), *order);
    return meta::MAMLAttr::getChecked(emit, ctx, *steps, f64(*lr), *order);
  }
  if (c.name == "reptile") {
    FieldReader r(diags, *c.fields, what, c.loc, {"steps", "inner_lr"});
    auto steps = r.integer("steps", 5, 1);
    auto lr = r.number("inner_lr", 0.01, true);
    if (r.hadError() || !steps || !lr)
      return nullptr;
    return meta::ReptileAttr::getChecked(emit, ctx, *steps, f64(*lr));
  }
  if (c.name == "anil") {
    FieldReader r(diags, *c.fields, what, c.loc,
                  {"steps", "inner_lr", "order", "head"});
    auto steps = r.integer("steps", 1, 1);
    auto lr = r.number("inner_lr", 0.01, true);
    auto order = r.integer("order", 2, 1);
    auto head = r.string("head", std::string("head"));
    if (r.hadError() || !steps || !lr || !order || !head)
      return nullptr;
    if (*order > 2) {
      r.error(*r.find("order")) << "order must be 1 or 2, got " << *order;
      return nullptr;
    }
    return meta::ANILAttr::getChecked(emit, ctx, *steps, f64(*lr), *order,
                                      StringRef(*head));
  }
  if (c.name == "protonet") {
    FieldReader r(diags, *c.fields, what, c.loc, {"distance"});
    auto distance = r.name("distance", std::string("squared_euclidean"));
    if (r.hadError() || !distance)
      return nullptr;
    auto kind = meta::symbolizeDistance(*distance);
    if (!kind) {
      InFlightDiagnostic diag = r.error(*r.find("distance"));
      diag << "unknown distance '" << *distance
           << "' (expected squared_euclidean)";
      attachDidYouMean(diag, *distance, {"squared_euclidean"});
      return nullptr;
    }
    return meta::ProtoNetAttr::get(ctx, *kind);
  }
  if (c.name == "imaml") {
    FieldReader r(diags, *c.fields, what, c.loc,
                  {"steps", "inner_lr", "lambda", "cg_steps"});
    auto steps = r.integer("steps", 5, 1);
    auto lr = r.number("inner_lr", 0.01, true);
    auto lambda = r.number("lambda", 1.0, true);
    auto cg = r.integer("cg_steps", 5, 1);
    if (r.hadError() || !steps || !lr || !lambda || !cg)
      return nullptr;
    return meta::IMAMLAttr::getChecked(emit, ctx, *steps, f64(*lr),
                                       f64(*lambda), *cg);
  }
  InFlightDiagnostic diag = diags.error(c.loc);
  diag << "unknown algorithm '" << c.name
       << "' (expected maml, fomaml, reptile, anil, metasgd, protonet or "
          "imaml)";
  attachDidYouMean(diag, c.name, names(kAlgorithms));
  return nullptr;
}

/// A name field that must be one of `choices` (the first is the default);
/// none after an error, which names the choices and the closest one.
std::optional<std::string> readChoice(FieldReader &fields, StringRef field,
                                      StringRef what,
                                      ArrayRef<StringRef> choices) {
  std::optional<std::string> value = fields.name(field, choices.front().str());
  if (!value || llvm::is_contained(choices, *value))
    return value;
  InFlightDiagnostic diag = fields.error(*fields.find(field));
  diag << "unknown " << what << " '" << *value << "' (expected ";
  for (auto [i, choice] : llvm::enumerate(choices))
    diag << (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") << choice;
  diag << ")";
  attachDidYouMean(diag, *value, choices);
  return std::nullopt;
}

/// `clip_norm` of an optimizer record: absent, or a number > 0 (set in
/// `clip`); false after an error.
bool readClipNorm(FieldReader &r, std::optional<double> &clip) {
  if (!r.has("clip_norm"))
    return true;
  clip = r.number("clip_norm", std::nullopt, true);
  return clip.has_value();
}

Attribute buildOptimizer(const Constructor &c, SourceDiagnostics &diags,
                         OpBuilder &b, std::optional<double> &clip) {
  MLIRContext *ctx = b.getContext();
  std::string what = "optimizer '" + c.name + "'";
  auto f64 = [](double v) { return llvm::APFloat(v); };
  auto emitError = [&]() { return diags.error(c.loc); };
  llvm::function_ref<InFlightDiagnostic()> emit = emitError;
  if (c.name == "sgd") {
    FieldReader r(diags, *c.fields, what, c.loc,
                  {"lr", "momentum", "weight_decay", "clip_norm"});
    auto lr = r.number("lr", std::nullopt, true);
    auto momentum = r.number("momentum", 0.0, false);
    auto decay = r.number("weight_decay", 0.0, false);
    bool clipRead = readClipNorm(r, clip);
    if (r.hadError() || !lr || !momentum || !decay || !clipRead)
      return nullptr;
    return meta::SGDAttr::getChecked(emit, ctx, f64(*lr), f64(*momentum),
                                     f64(*decay));
  }
  if (c.name == "adam" || c.name == "adamw") {
    bool decoupled = c.name == "adamw";
    FieldReader r(diags, *c.fields, what, c.loc,
                  {"lr", "beta1", "beta2", "eps", "weight_decay", "clip_norm"});
    auto lr = r.number("lr", 0.001, true);
    auto beta1 = r.number("beta1", 0.9, false);
    auto beta2 = r.number("beta2", 0.999, false);
    auto eps = r.number("eps", 1e-8, true);
    auto decay = r.number("weight_decay", decoupled ? 0.01 : 0.0, false);
    bool clipRead = readClipNorm(r, clip);
    if (r.hadError() || !lr || !beta1 || !beta2 || !eps || !decay || !clipRead)
      return nullptr;
    if (decoupled)
      return meta::AdamWAttr::getChecked(emit, ctx, f64(*lr), f64(*beta1),
                                         f64(*beta2), f64(*eps), f64(*decay));
    return meta::AdamAttr::getChecked(emit, ctx, f64(*lr), f64(*beta1),
                                      f64(*beta2), f64(*eps), f64(*decay));
  }
  InFlightDiagnostic diag = diags.error(c.loc);
  diag << "unknown optimizer '" << c.name << "' (expected sgd, adam or adamw)";
  attachDidYouMean(diag, c.name, names(kOptimizers));
  return nullptr;
}

/// The record value of a block field (`evaluate { ... }`), or null.
const ConfigValue *recordField(FieldReader &fields, StringRef name) {
  const Field *f = fields.find(name);
  if (!f)
    return nullptr;
  if (!f->value || f->value->kind != ConfigValue::Kind::Record ||
      !f->value->text.empty()) {
    fields.error(*f) << "field '" << name << "' of " << fields.getWhat()
                     << " expects a record { ... }";
    return nullptr;
  }
  return f->value.get();
}

/// `parallel { auto }`: the planner chooses the mesh (metac's driver, with
/// a cluster description from `cluster = "FILE"` or --cluster).
struct AutoPlan {
  bool requested = false;
  std::string cluster;
};

/// `parallel { allreduce = ring, compress = bf16, overlap = true }`: how
/// all-reduces move their data (`--allreduce`, `--compress`, `--overlap`
/// override them).
struct CommunicationChoice {
  std::string allReduce = "library";
  std::string compress = "none";
  bool overlap = false;
  int64_t staleness = 0;
  /// `staleness = inf`: asynchronous updates (parameter servers only).
  bool asynchronous = false;
  int64_t parameterServers = 0;
  /// How the task axis splits a mixed meta-batch: by cost or by count.
  std::string balance = "cost";
};

/// Reads `compress`: a name (none, bf16, fp16) or a record (`topk { ratio
/// = 0.01 }`, `powersgd { rank = 4 }`), as the text --compress takes
/// (`topk:0.01`); nullopt after an error.
std::optional<std::string> readCompression(SourceDiagnostics &diags,
                                           FieldReader &r) {
  const Field *field = r.find("compress");
  if (field && field->value &&
      field->value->kind == ConfigValue::Kind::Record) {
    const ConfigValue &method = *field->value;
    bool topk = method.text == "topk";
    if (!topk && method.text != "powersgd") {
      diags.error(method.loc)
          << "unknown all-reduce compression '" << method.text
          << "' (expected none, bf16, fp16, topk { ratio = ... } or "
             "powersgd { rank = ... })";
      return std::nullopt;
    }
    FieldReader inner(diags, method.fields, method.text, method.loc,
                      {topk ? "ratio" : "rank"});
    if (inner.hadError())
      return std::nullopt;
    if (topk) {
      auto ratio = inner.number("ratio", std::nullopt, /*positive=*/true);
      if (!ratio)
        return std::nullopt;
      if (*ratio > 1) {
        inner.error(*inner.find("ratio"))
            << "top-k sends a fraction of the entries: ratio must be in (0, "
               "1], got "
            << *ratio;
        return std::nullopt;
      }
      // As --compress writes it (6 significant digits: "topk:0.1").
      std::string text;
      llvm::raw_string_ostream(text) << "topk:" << llvm::format("%g", *ratio);
      return text;
    }
    auto rank = inner.integer("rank", std::nullopt, 1);
    if (!rank)
      return std::nullopt;
    return "powersgd:" + std::to_string(*rank);
  }
  auto compress = r.name("compress", std::string("none"));
  if (!compress)
    return std::nullopt;
  if (!meta::parseCompression(*compress) ||
      compress->find(':') != std::string::npos) {
    InFlightDiagnostic diag = r.error(*field);
    diag << "unknown all-reduce compression '" << *compress
         << "' (expected none, bf16, fp16, topk { ratio = ... } or "
            "powersgd { rank = ... })";
    const SmallVector<StringRef> names = {"none", "bf16", "fp16"};
    attachDidYouMean(diag, *compress, names);
    return std::nullopt;
  }
  return compress;
}

/// Reads `allreduce`, `compress` and `overlap`; false after an error.
bool readCommunication(SourceDiagnostics &diags, FieldReader &r,
                       CommunicationChoice &choice) {
  auto allReduce = r.name("allreduce", std::string("library"));
  auto overlap = r.name("overlap", std::string("false"));
  // `staleness = inf` is asynchronous; otherwise a bound.
  const Field *stalenessField = r.find("staleness");
  choice.asynchronous =
      stalenessField && stalenessField->value &&
      stalenessField->value->kind == ConfigValue::Kind::Name &&
      stalenessField->value->text == "inf";
  if (stalenessField && stalenessField->value && !choice.asynchronous &&
      stalenessField->value->kind == ConfigValue::Kind::Name) {
    r.error(*stalenessField)
        << "staleness must be an integer >= 0 or inf, got '"
        << stalenessField->value->text << "'";
    return false;
  }
  auto staleness = choice.asynchronous ? std::optional<int64_t>(0)
                                       : r.integer("staleness", int64_t(0), 0);
  auto servers = r.integer("parameter_servers", int64_t(0), 0);
  auto balance = r.name("balance", std::string("cost"));
  if (!allReduce || !overlap || !staleness || !servers || !balance)
    return false;
  if (*balance != "cost" && *balance != "count") {
    InFlightDiagnostic diag = r.error(*r.find("balance"));
    diag << "balance must be cost or count, got '" << *balance << "'";
    attachDidYouMean(diag, *balance, {"cost", "count"});
    return false;
  }
  choice.balance = *balance;
  if (*servers > 4096) {
    r.error(*r.find("parameter_servers"))
        << "parameter_servers must be at most 4096, got " << *servers;
    return false;
  }
  choice.parameterServers = *servers;
  if (*staleness > 1024) {
    r.error(*r.find("staleness"))
        << "staleness must be at most 1024, got " << *staleness;
    return false;
  }
  choice.staleness = *staleness;
  if (*overlap != "true" && *overlap != "false") {
    r.error(*r.find("overlap"))
        << "overlap must be true or false, got '" << *overlap << "'";
    return false;
  }
  const SmallVector<StringRef> algorithms = {"library", "ring", "tree",
                                             "hierarchical"};
  if (!llvm::is_contained(algorithms, *allReduce)) {
    InFlightDiagnostic diag = r.error(*r.find("allreduce"));
    diag << "unknown all-reduce algorithm '" << *allReduce
         << "' (expected library, ring, tree or hierarchical)";
    attachDidYouMean(diag, *allReduce, algorithms);
    return false;
  }
  std::optional<std::string> compress = readCompression(diags, r);
  if (!compress)
    return false;
  choice.allReduce = *allReduce;
  choice.compress = *compress;
  choice.overlap = *overlap == "true";
  return true;
}

meta::PlanAttr buildPlan(const ConfigValue &record, SourceDiagnostics &diags,
                         OpBuilder &b, int64_t metaBatch, AutoPlan &automatic,
                         CommunicationChoice &communication, bool &failed) {
  failed = true;
  FieldReader r(diags, record.fields, "parallel", record.loc,
                {"mesh", "micro_batches", "schedule", "auto", "cluster",
                 "allreduce", "compress", "overlap", "staleness",
                 "parameter_servers", "balance"});
  if (r.hadError() || !readCommunication(diags, r, communication))
    return nullptr;
  const Field *autoField = r.find("auto");
  if (const Field *cluster = r.find("cluster")) {
    if (!autoField) {
      diags.error(cluster->loc) << "'cluster' is only used by automatic "
                                   "planning: add 'auto' or give a mesh";
      return nullptr;
    }
    auto path = r.string("cluster", std::nullopt);
    if (!path)
      return nullptr;
    automatic.cluster = *path;
  }
  if (autoField) {
    if (autoField->value) {
      r.error(*autoField) << "'auto' is a flag: write 'parallel { auto }'";
      return nullptr;
    }
    for (StringRef other : {"mesh", "micro_batches", "schedule"})
      if (const Field *f = r.find(other)) {
        r.error(*f) << "'" << other
                    << "' cannot be given with 'auto': the planner "
                       "chooses the plan";
        return nullptr;
      }
    automatic.requested = true;
    failed = false;
    return nullptr;
  }
  int64_t axes[6] = {1, 1, 1, 1, 1, 1};
  if (const Field *mesh = r.find("mesh")) {
    if (!mesh->value || mesh->value->kind != ConfigValue::Kind::Record ||
        !mesh->value->text.empty()) {
      r.error(*mesh)
          << "'mesh' expects a record such as { task = 4, data = 2 }";
      return nullptr;
    }
    FieldReader m(diags, mesh->value->fields, "mesh", mesh->value->loc,
                  {"task", "data", "tensor", "pipeline", "expert", "sequence"});
    const char *axisNames[] = {"task",     "data",   "tensor",
                               "pipeline", "expert", "sequence"};
    for (int i = 0; i < 6; ++i) {
      auto size = m.integer(axisNames[i], 1, 1);
      if (!size)
        return nullptr;
      axes[i] = *size;
    }
    if (m.hadError())
      return nullptr;
  }
  auto micro = r.integer("micro_batches", 1, 1);
  // `1f1b` does not lex as a name (it starts with a digit): take a string too.
  const Field *scheduleField = r.find("schedule");
  std::optional<std::string> schedule;
  if (scheduleField && scheduleField->value &&
      scheduleField->value->kind == ConfigValue::Kind::String)
    schedule = scheduleField->value->text;
  else
    schedule = r.name("schedule", std::string("gpipe"));
  if (!micro || !schedule)
    return nullptr;
  auto kind = meta::symbolizePipelineSchedule(*schedule);
  if (!kind) {
    InFlightDiagnostic diag = r.error(*r.find("schedule"));
    diag << "unknown schedule '" << *schedule
         << "' (expected gpipe, 1f1b or pipedream)";
    attachDidYouMean(diag, *schedule, {"gpipe", "1f1b", "pipedream"});
    return nullptr;
  }
  // Without forming the product, which may overflow (to zero).
  if (metaBatch % axes[0] || (metaBatch / axes[0]) % *micro) {
    diags.error(record.loc)
        << "meta_batch " << metaBatch << " is not divisible by the task axis ("
        << axes[0] << ") times micro_batches (" << *micro << ")";
    return nullptr;
  }
  failed = false;
  return meta::PlanAttr::get(b.getContext(), axes[0], axes[1], axes[2], axes[3],
                             axes[4], axes[5], *micro, *kind);
}

} // namespace

meta::TrainOp metac::frontend::generateTrain(const TrainDecl &decl,
                                             const DeclarationNames &declared,
                                             SourceDiagnostics &diags,
                                             OpBuilder &builder) {
  std::string what = "training program '" + decl.name + "'";
  FieldReader fields(diags, decl.fields, what, decl.loc,
                     {"model", "tasks", "loss", "algorithm", "optimizer",
                      "meta_batch", "iterations", "seed", "evaluate",
                      "checkpoint", "parallel", "on_nonfinite", "precision",
                      "loss_scale", "offload", "mix"});

  // References to other declarations, with suggestions for typos.
  auto lookup = [&](StringRef field, auto &table,
                    StringRef kind) -> std::optional<std::string> {
    std::optional<std::string> name = fields.name(field, std::nullopt);
    if (!name || declared.failed.contains(*name))
      return std::nullopt;
    if (!table.count(*name)) {
      SmallVector<StringRef> candidates;
      for (auto &entry : table)
        candidates.push_back(entry.getKey());
      InFlightDiagnostic diag = fields.error(*fields.find(field));
      diag << "unknown " << kind << " '" << *name << "'";
      attachDidYouMean(diag, *name, candidates);
      return std::nullopt;
    }
    return name;
  };
  auto model = lookup("model", declared.models, "model");
  auto tasks = lookup("tasks", declared.tasks, "task distribution");

  std::optional<Constructor> algorithmValue =
      readConstructor(fields, "algorithm");
  if (!algorithmValue && !fields.has("algorithm"))
    fields.missing("algorithm");
  Attribute algorithm = algorithmValue
                            ? buildAlgorithm(*algorithmValue, diags, builder)
                            : nullptr;

  std::optional<meta::LossKind> loss;
  bool isProtoNet = algorithm && isa<meta::ProtoNetAttr>(algorithm);
  if (auto lossName = fields.name(
          "loss", isProtoNet ? std::optional<std::string>("cross_entropy")
                             : std::nullopt)) {
    loss = meta::symbolizeLossKind(*lossName);
    if (!loss) {
      InFlightDiagnostic diag = fields.error(*fields.find("loss"));
      diag << "unknown loss '" << *lossName
           << "' (expected mse or cross_entropy)";
      attachDidYouMean(diag, *lossName, {"mse", "cross_entropy"});
    }
  }

  Attribute optimizer;
  std::optional<double> clipNorm;
  if (std::optional<Constructor> c = readConstructor(fields, "optimizer"))
    optimizer = buildOptimizer(*c, diags, builder, clipNorm);
  else if (!fields.has("optimizer"))
    optimizer = meta::AdamAttr::get(builder.getContext(), llvm::APFloat(1e-3),
                                    llvm::APFloat(0.9), llvm::APFloat(0.999),
                                    llvm::APFloat(1e-8), llvm::APFloat(0.0));

  auto metaBatch = fields.integer("meta_batch", std::nullopt, 1);
  auto iterations = fields.integer("iterations", std::nullopt, 0);
  auto seed = fields.integer("seed", 0, 0);
  auto onNonfinite = readChoice(fields, "on_nonfinite", "on_nonfinite policy",
                                {"stop", "skip", "ignore"});
  auto precision =
      readChoice(fields, "precision", "precision", {"f32", "bf16", "fp16"});
  auto offload = readChoice(fields, "offload", "offload",
                            {"none", "optimizer", "params", "all"});
  std::optional<std::string> lossScale;
  if (fields.has("loss_scale"))
    lossScale =
        readChoice(fields, "loss_scale", "loss scaling", {"dynamic", "off"});
  if (lossScale == "dynamic" && onNonfinite == "ignore") {
    fields.error(*fields.find("loss_scale"))
        << "dynamic loss scaling needs the check of each meta-iteration "
           "that on_nonfinite = ignore leaves out (use stop or skip)";
    lossScale.reset();
  }

  meta::PlanAttr plan;
  AutoPlan automatic;
  CommunicationChoice communication;
  bool planFailed = false;
  if (const ConfigValue *parallel = recordField(fields, "parallel");
      parallel && metaBatch)
    plan = buildPlan(*parallel, diags, builder, *metaBatch, automatic,
                     communication, planFailed);

  std::optional<int64_t> checkpointEvery;
  std::optional<std::string> checkpointDir;
  if (const ConfigValue *ckpt = recordField(fields, "checkpoint")) {
    FieldReader c(diags, ckpt->fields, "checkpoint", ckpt->loc,
                  {"every", "dir"});
    checkpointEvery = c.integer("every", std::nullopt, 1);
    checkpointDir = c.string("dir", std::nullopt);
    if (c.hadError() || !checkpointEvery || !checkpointDir)
      return nullptr;
  }

  // The evaluation block names its own tasks (checked after the train op
  // exists, so errors in it still come with the rest).
  const ConfigValue *evaluate = recordField(fields, "evaluate");

  if (fields.hadError() || !model || !tasks || !algorithm || !loss ||
      !optimizer || !metaBatch || !iterations || !seed || !onNonfinite ||
      !precision || (fields.has("loss_scale") && !lossScale) ||
      (fields.has("parallel") && planFailed))
    return nullptr;

  ArrayAttr mix;
  if (const ConfigValue *record = recordField(fields, "mix")) {
    (void)record;
    if (declared.tasks.count(*tasks))
      mix = readTaskMix(*fields.find("mix"), diags, builder,
                        declared.tasks.lookup(*tasks), algorithm, *metaBatch);
    if (!mix)
      return nullptr;
  }

  auto train = meta::TrainOp::create(
      builder, diags.getLocation(decl.loc), decl.name, *model, *tasks, *loss,
      algorithm, optimizer, *metaBatch, *iterations, *seed);
  if (plan)
    train.setPlanAttr(plan);
  if (automatic.requested) {
    train->setAttr("meta.plan_auto", builder.getUnitAttr());
    if (!automatic.cluster.empty())
      train->setAttr("meta.plan_cluster",
                     builder.getStringAttr(automatic.cluster));
  }
  // Read by meta-select-allreduce when --allreduce / --compress are not
  // given.
  if (communication.allReduce != "library")
    train->setAttr("meta.allreduce",
                   builder.getStringAttr(communication.allReduce));
  if (communication.compress != "none")
    train->setAttr("meta.compress",
                   builder.getStringAttr(communication.compress));
  if (communication.overlap)
    train->setAttr("meta.overlap", builder.getBoolAttr(true));
  if (communication.staleness > 0)
    train->setAttr("meta.staleness",
                   builder.getI64IntegerAttr(communication.staleness));
  if (communication.asynchronous)
    train->setAttr("meta.asynchronous", builder.getUnitAttr());
  if (communication.parameterServers > 0)
    train->setAttr("meta.parameter_servers",
                   builder.getI64IntegerAttr(communication.parameterServers));
  // Read by the expand phase (one batch per class) and, for `balance`, by
  // the assignment of tasks to the task axis.
  if (mix)
    train->setAttr("meta.task_mix", mix);
  if (communication.balance != "cost")
    train->setAttr("meta.balance",
                   builder.getStringAttr(communication.balance));
  if (clipNorm)
    train.setClipNormAttr(builder.getF64FloatAttr(*clipNorm));
  if (*onNonfinite != "stop")
    train.setOnNonfinite(*onNonfinite);
  if (*precision != "f32")
    train.setPrecision(*precision);
  // Read by meta-offload when --offload is not given.
  if (offload && *offload != "none")
    train->setAttr("meta.offload", builder.getStringAttr(*offload));
  if (lossScale)
    train.setLossScale(*lossScale);
  if (checkpointEvery) {
    train.setCheckpointEvery(*checkpointEvery);
    train.setCheckpointDir(*checkpointDir);
  }
  if (evaluate) {
    FieldReader e(diags, evaluate->fields, "evaluate", evaluate->loc,
                  {"tasks", "count", "steps", "diverge_above"});
    auto evalTasks = e.name("tasks", *tasks);
    auto count = e.integer("count", 600, 1);
    std::optional<double> divergeAbove;
    if (e.has("diverge_above"))
      divergeAbove = e.number("diverge_above", std::nullopt, true);
    int64_t defaultSteps = 0;
    if (auto maml = dyn_cast<meta::MAMLAttr>(algorithm))
      defaultSteps = maml.getSteps();
    auto steps = e.integerList("steps", std::vector<int64_t>{defaultSteps}, 0);
    bool evalFailed = evalTasks && declared.failed.contains(*evalTasks);
    if (evalTasks && !evalFailed && !declared.tasks.count(*evalTasks)) {
      SmallVector<StringRef> candidates;
      for (auto &entry : declared.tasks)
        candidates.push_back(entry.getKey());
      InFlightDiagnostic diag = e.error(*e.find("tasks"));
      diag << "unknown task distribution '" << *evalTasks << "'";
      attachDidYouMean(diag, *evalTasks, candidates);
    }
    if (e.hadError() || evalFailed || !evalTasks || !count || !steps ||
        (e.has("diverge_above") && !divergeAbove)) {
      train.erase();
      return nullptr;
    }
    if (steps->empty()) {
      e.error(*e.find("steps")) << "'steps' needs at least one value";
      train.erase();
      return nullptr;
    }
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&train.getBody().front());
    meta::EvaluateOp::create(
        builder, diags.getLocation(evaluate->loc), *evalTasks, *count, *steps,
        divergeAbove ? builder.getF64FloatAttr(*divergeAbove) : FloatAttr());
  }
  return train;
}
