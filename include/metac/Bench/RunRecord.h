//===- RunRecord.h - what one benchmark run measured ------------*- C++ -*-===//
//
// `metac run --metrics` writes a JSON line per meta-iteration and one per
// evaluation; a run's record condenses them (the median iteration after
// the first, which warms caches; peaks; collectives per iteration and
// axis; the evaluations) and adds the machine the run was on.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_BENCH_RUNRECORD_H
#define METAC_BENCH_RUNRECORD_H

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace metac::bench {

/// The summary of a metrics file (JSON lines), or an error naming the
/// line that does not parse.
llvm::Expected<llvm::json::Object> summarizeMetrics(llvm::StringRef path);

/// The machine and software: CPU model, cores, memory, GPUs and driver,
/// MPI, LLVM, the OS, the compiler, and metac's commit.
llvm::json::Object describeEnvironment();

} // namespace metac::bench

#endif // METAC_BENCH_RUNRECORD_H
