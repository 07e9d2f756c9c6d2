//===- Runner.h - compile and train a spec in-process ------------*- C++
//-*-===//
//
// `metac run`: the spec's step and evaluation functions are lowered, JIT
// compiled and handed to the runtime's training driver together with what
// the IR says about the program (parameters and their initialisers, the
// optimizer's state, the task distributions, the evaluations).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_RUNNER_RUNNER_H
#define METAC_RUNNER_RUNNER_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

namespace metac {

struct RunOptions {
  std::optional<int64_t> iterations;
  std::optional<uint64_t> seed;
  std::string initParams, saveParams, checkpointDir, resumeDir, metrics;
  /// initParams may lack some parameters: they keep their initialisation.
  bool initParamsPartial = false;
  int64_t checkpointEvery = 0;
  /// metart_checkpoint_format (0: sharded when ZeRO shards the state).
  int32_t checkpointFormat = 0;
  /// "cpu", "cuda", or empty for cuda when available, else cpu.
  std::string backend;
  uint64_t memoryLimit = 0;
  /// 0: quiet; 1: plain lines; 2: a progress bar on a terminal.
  int progress = 2;
  /// Time each runtime call of the meta-iterations and print the totals.
  bool profile = false;
  /// Where to write the meta-iterations' timeline (Chrome trace JSON), or
  /// empty.
  std::string trace;
  /// Run each meta-iteration op by op instead of replaying a CUDA graph.
  bool noCudaGraph = false;
  /// metart_nonfinite overriding the spec's (0: the spec's), the skips in a
  /// row that still stop a run under skip (0: the runtime's default), and
  /// the evaluation's divergence threshold (0: the spec's).
  int32_t onNonfinite = 0;
  int64_t maxConsecutiveSkips = 0;
  double divergeAbove = 0;
  /// A straggler: world rank `slowRank` takes `slowFactor` times as long
  /// per meta-iteration (`--slow-rank=R:FACTOR`); factor 0: none.
  int64_t slowRank = 0;
  double slowFactor = 0;
  /// > 0: the straggler moves to the next rank every this many
  /// meta-iterations (metart_train_options::slow_period).
  int64_t slowPeriod = 0;
  /// Seconds a blocking collective may make no progress (0: the
  /// runtime's default; metart_train_options::comm_timeout_seconds).
  double commTimeout = 0;
  /// A hang for tests: world rank `hangRank` stops before meta-iteration
  /// `hangIteration` (0: none).
  int64_t hangRank = 0;
  int64_t hangIteration = 0;
};

/// Trains the program of `module` (IR after the autodiff phase, with one
/// meta.train) and prints the evaluation to `os`. Reports errors with
/// emitError and fails.
mlir::LogicalResult runProgram(mlir::ModuleOp module, const RunOptions &options,
                               llvm::raw_ostream &os);

/// Writes an executable to `outputPath` that trains the program of `module`
/// (IR after the autodiff phase) when run, taking the options `metac run`
/// takes: the step and evaluation functions compiled from their LLVM IR, a
/// generated `main` holding the program's description, and the runtime
/// library, linked by clang.
mlir::LogicalResult emitExecutable(mlir::ModuleOp module,
                                   llvm::StringRef outputPath);

} // namespace metac

#endif // METAC_RUNNER_RUNNER_H
