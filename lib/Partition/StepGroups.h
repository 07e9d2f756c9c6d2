//===- StepGroups.h - mixed meta-batches' per-group steps -------*- C++ -*-===//
//
// A meta-batch mixed from task classes (`meta.task_mix`) may give the ranks
// of the task axis different shares of its classes, and then each group of
// ranks with the same shares its own step (`meta.step_variants`). Passes
// that rewrite only `meta.step` refuse such programs.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_PARTITION_STEPGROUPS_H
#define METAC_LIB_PARTITION_STEPGROUPS_H

#include "metac/Dialect/Meta/IR/MetaOps.h"

namespace metac::partition {

/// Whether the task ranks of `train` run different step functions.
inline bool hasStepGroups(meta::TrainOp train) {
  auto variants = train->getAttrOfType<mlir::ArrayAttr>("meta.step_variants");
  return variants && variants.size() > 1;
}

} // namespace metac::partition

#endif // METAC_LIB_PARTITION_STEPGROUPS_H
