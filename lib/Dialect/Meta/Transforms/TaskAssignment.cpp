//===- TaskAssignment.cpp - a mixed meta-batch over the task axis ---------===//

#include "metac/Dialect/Meta/Transforms/TaskAssignment.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace metac::meta;

std::optional<std::vector<TaskClass>>
metac::meta::readTaskClasses(ArrayAttr mix) {
  std::vector<TaskClass> classes;
  for (Attribute entry : mix) {
    auto dict = dyn_cast<DictionaryAttr>(entry);
    if (!dict)
      return std::nullopt;
    TaskClass c;
    auto name = dict.getAs<StringAttr>("name");
    if (!name)
      return std::nullopt;
    c.name = name.str();
    int64_t *fields[] = {&c.tasks, &c.support, &c.query, &c.steps};
    const char *names[] = {"tasks", "support", "query", "steps"};
    for (int i = 0; i < 4; ++i) {
      auto value = dict.getAs<IntegerAttr>(names[i]);
      if (!value || value.getInt() < (i == 3 ? 0 : 1))
        return std::nullopt;
      *fields[i] = value.getInt();
    }
    classes.push_back(std::move(c));
  }
  if (classes.empty())
    return std::nullopt;
  return classes;
}

double metac::meta::estimateTaskCost(const TaskClass &c, int64_t order,
                                     bool prototypes) {
  double perSupportStep = order >= 2 ? 9 : 3;
  double perUpdate = order >= 2 ? 2 : 1;
  double support =
      prototypes ? 3.0 * c.support : perSupportStep * c.support * c.steps;
  return support + 3.0 * c.query + perUpdate * c.steps + 1;
}

TaskAssignment metac::meta::assignTasks(ArrayRef<TaskClass> classes,
                                        int64_t parts, bool byCost,
                                        int64_t order, bool prototypes,
                                        std::string &error) {
  TaskAssignment a;
  size_t n = classes.size();
  int64_t total = 0;
  for (const TaskClass &c : classes)
    total += c.tasks;
  if (parts < 1 || total < parts) {
    error = "the meta-batch of " + std::to_string(total) +
            " tasks is smaller than the task axis (" + std::to_string(parts) +
            " ranks)";
    return a;
  }
  a.count.assign(parts, std::vector<int64_t>(n, 0));
  a.cost.assign(parts, 0);
  if (byCost) {
    // LPT: the most expensive tasks first, each to the least loaded rank
    // (the lowest coordinate among equals, so the split is deterministic).
    std::vector<size_t> order_(n);
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(), [&](size_t x, size_t y) {
      return estimateTaskCost(classes[x], order, prototypes) >
             estimateTaskCost(classes[y], order, prototypes);
    });
    for (size_t c : order_) {
      double cost = estimateTaskCost(classes[c], order, prototypes);
      for (int64_t k = 0; k < classes[c].tasks; ++k) {
        int64_t best =
            std::min_element(a.cost.begin(), a.cost.end()) - a.cost.begin();
        a.cost[best] += cost;
        ++a.count[best][c];
      }
    }
  } else {
    if (total % parts) {
      error = "balance = count needs the meta-batch of " +
              std::to_string(total) + " tasks to divide over the task axis (" +
              std::to_string(parts) + " ranks)";
      return a;
    }
    // The meta-batch class after class, cut into equal counts.
    int64_t each = total / parts, task = 0;
    for (size_t c = 0; c < n; ++c)
      for (int64_t k = 0; k < classes[c].tasks; ++k, ++task) {
        ++a.count[task / each][c];
        a.cost[task / each] += estimateTaskCost(classes[c], order, prototypes);
      }
  }
  a.first.assign(parts, std::vector<int64_t>(n, 0));
  for (size_t c = 0; c < n; ++c)
    for (int64_t t = 1; t < parts; ++t)
      a.first[t][c] = a.first[t - 1][c] + a.count[t - 1][c];
  for (int64_t t = 0; t < parts; ++t) {
    auto it = std::find(a.groups.begin(), a.groups.end(), a.count[t]);
    a.groupOf.push_back(it - a.groups.begin());
    if (it == a.groups.end())
      a.groups.push_back(a.count[t]);
  }
  return a;
}

std::vector<int64_t> metac::meta::flattenAssignment(const TaskAssignment &a) {
  std::vector<int64_t> flat;
  for (size_t t = 0; t < a.groupOf.size(); ++t) {
    flat.push_back(a.groupOf[t]);
    for (size_t c = 0; c < a.count[t].size(); ++c) {
      flat.push_back(a.first[t][c]);
      flat.push_back(a.count[t][c]);
    }
  }
  return flat;
}

void metac::meta::dropExpansion(ModuleOp module, StringRef trainName) {
  SymbolTable symbols(module);
  auto train = symbols.lookup<TrainOp>(trainName);
  SmallVector<StringRef> functions;
  if (auto variants = train->getAttrOfType<ArrayAttr>("meta.step_variants"))
    for (auto v : variants.getAsRange<FlatSymbolRefAttr>())
      functions.push_back(v.getValue());
  else if (auto step = train->getAttrOfType<FlatSymbolRefAttr>("meta.step"))
    functions.push_back(step.getValue());
  if (auto evals = train->getAttrOfType<ArrayAttr>("meta.eval"))
    for (auto e : evals.getAsRange<FlatSymbolRefAttr>())
      functions.push_back(e.getValue());
  for (StringRef name : functions)
    if (Operation *f = symbols.lookup(name))
      f->erase();
  for (StringRef attr : {"meta.step", "meta.step_variants", "meta.eval",
                         "meta.task_assignment", "meta.task_parts"})
    train->removeAttr(attr);
}

LogicalResult metac::meta::expandTaskGroups(
    TrainOp train, ArrayAttr mix, int64_t taskParts, StringRef balance,
    llvm::function_ref<FailureOr<func::FuncOp>(StringRef, ArrayRef<BatchPart>)>
        buildStep) {
  Builder b(train.getContext());
  std::optional<std::vector<TaskClass>> classes = readTaskClasses(mix);
  if (!classes)
    return train.emitOpError("has a malformed meta.task_mix (expected "
                             "{name, tasks, support, query, steps} "
                             "dictionaries)");
  int64_t metaBatch = 0;
  for (const TaskClass &c : *classes)
    metaBatch += c.tasks;
  if (metaBatch != static_cast<int64_t>(train.getMetaBatch()))
    return train.emitOpError("mixes ")
           << metaBatch << " tasks into a meta-batch of "
           << train.getMetaBatch();
  int64_t parts = taskParts;
  if (parts <= 0)
    parts = train.getPlanAttr() ? train.getPlanAttr().getTask() : 1;
  std::string how = balance.str();
  if (how.empty())
    how = train->hasAttr("meta.balance")
              ? train->getAttrOfType<StringAttr>("meta.balance").str()
              : "cost";
  if (how != "cost" && how != "count")
    return train.emitOpError("balance must be cost or count, got '")
           << how << "'";
  int64_t order = 2;
  if (auto maml = dyn_cast<MAMLAttr>(train.getAlgorithm()))
    order = maml.getOrder();
  else if (auto anil = dyn_cast<ANILAttr>(train.getAlgorithm()))
    order = anil.getOrder();
  else if (auto metasgd = dyn_cast<MetaSGDAttr>(train.getAlgorithm()))
    order = metasgd.getOrder();
  std::string error;
  TaskAssignment assignment =
      assignTasks(*classes, parts, how == "cost", order,
                  isa<ProtoNetAttr>(train.getAlgorithm()), error);
  if (!error.empty())
    return train.emitOpError() << error;
  SmallVector<Attribute> variants;
  for (auto [g, shares] : llvm::enumerate(assignment.groups)) {
    SmallVector<BatchPart> batches;
    SmallVector<int64_t> present;
    for (auto [c, share] : llvm::enumerate(shares))
      if (share > 0) {
        const TaskClass &k = (*classes)[c];
        // The group's batch as the whole axis would hold it: the
        // partitioner gives each of its ranks `share` tasks.
        batches.push_back({share * parts, k.support, k.query, k.steps});
        present.push_back(c);
      }
    std::string name = (train.getSymName() + ".step").str();
    if (g > 0)
      name += ".group" + std::to_string(g);
    FailureOr<func::FuncOp> step = buildStep(name, batches);
    if (failed(step))
      return failure();
    (*step)->setAttr("meta.task_classes", b.getDenseI64ArrayAttr(present));
    variants.push_back(FlatSymbolRefAttr::get(*step));
  }
  train->setAttr("meta.step", cast<FlatSymbolRefAttr>(variants.front()));
  train->setAttr("meta.step_variants", b.getArrayAttr(variants));
  train->setAttr("meta.task_assignment",
                 b.getDenseI64ArrayAttr(flattenAssignment(assignment)));
  train->setAttr("meta.task_parts", b.getI64IntegerAttr(parts));
  return success();
}
