//===- LearnedParams.h - the parameters an outer update learns --*- C++ -*-===//
//
// Shared by the passes that change how parameters are held between steps
// (meta-keep-params-split, meta-keep-stage-params).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_PARTITION_LEARNEDPARAMS_H
#define METAC_LIB_PARTITION_LEARNEDPARAMS_H

#include "metac/Dialect/Meta/IR/MetaOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace metac::partition {

/// The outer update of `function`, where it has exactly one.
inline meta::OuterStepOp outerStepOf(mlir::func::FuncOp function) {
  meta::OuterStepOp found;
  int count = 0;
  function.walk([&](meta::OuterStepOp step) {
    found = step;
    ++count;
  });
  return count == 1 ? found : meta::OuterStepOp();
}

/// How many leading arguments of `first` (a function that takes the
/// parameters first) are learned: the step's own where it names them
/// (Meta-SGD's rates), else the model's.
inline unsigned learnedParamCount(mlir::func::FuncOp model,
                                  mlir::func::FuncOp first) {
  unsigned params = model.getNumArguments() - 1;
  if (first.getNumArguments() > 0 &&
      first.getArgAttrOfType<mlir::StringAttr>(0, "meta.param")) {
    params = 0;
    while (params < first.getNumArguments() &&
           first.getArgAttrOfType<mlir::StringAttr>(params, "meta.param"))
      ++params;
  }
  return params;
}

} // namespace metac::partition

#endif // METAC_LIB_PARTITION_LEARNEDPARAMS_H
