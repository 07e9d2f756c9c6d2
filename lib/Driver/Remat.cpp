//===- Remat.cpp - recomputation chosen from a memory budget --------------===//

#include "Remat.h"

#include "metac/Planner/CostModel.h"
#include "metac/Planner/OpCost.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>

using namespace mlir;
using namespace metac;

static constexpr int64_t kEveryStep = driver::kRematEveryStep;

llvm::Expected<OwningOpRef<ModuleOp>>
metac::driver::compileToAutodiff(ModuleOp metaModule,
                                 const PipelineOptions &options) {
  OwningOpRef<ModuleOp> copy = cast<ModuleOp>(metaModule->clone());
  PassManager pm(metaModule.getContext());
  std::string messages;
  // A failure here is the same one the real compilation reports.
  ScopedDiagnosticHandler quiet(metaModule.getContext(), [&](Diagnostic &d) {
    messages += d.str() + "\n";
    return success();
  });
  if (failed(buildPipelineTo(pm, Phase::Autodiff, options)) ||
      failed(pm.run(*copy)))
    return llvm::createStringError("cannot compile to the autodiff phase: " +
                                   messages);
  return copy;
}

llvm::Expected<uint64_t>
metac::driver::autodiffPeakBytes(ModuleOp metaModule,
                                 const PipelineOptions &options) {
  llvm::Expected<OwningOpRef<ModuleOp>> copy =
      compileToAutodiff(metaModule, options);
  if (!copy)
    return copy.takeError();
  uint64_t peak = 0;
  (**copy)->walk([&](func::FuncOp function) {
    uint64_t bytes = planner::replayScratch(function).peakBytes;
    for (BlockArgument arg : function.getArguments())
      bytes += planner::tensorBytes(arg.getType());
    peak = std::max(peak, bytes);
  });
  return peak;
}

llvm::Expected<driver::RematChoice>
metac::driver::chooseRemat(ModuleOp metaModule, const PipelineOptions &options,
                           uint64_t budgetBytes) {
  RematChoice best;
  uint64_t smallest = std::numeric_limits<uint64_t>::max();
  int64_t smallestSegments = 0;
  uint64_t previous = 0;
  for (int64_t segments :
       {int64_t(0), int64_t(2), int64_t(3), int64_t(4), int64_t(6), int64_t(8),
        int64_t(12), int64_t(16), int64_t(24), int64_t(32), kEveryStep}) {
    PipelineOptions candidate = options;
    candidate.remat = segments;
    llvm::Expected<uint64_t> peak = autodiffPeakBytes(metaModule, candidate);
    if (!peak)
      return peak.takeError();
    if (segments == 0)
      best.keptPeakBytes = *peak;
    if (*peak <= budgetBytes) {
      best.segments = segments;
      best.peakBytes = *peak;
      return best;
    }
    if (*peak < smallest) {
      smallest = *peak;
      smallestSegments = segments;
    }
    // More segments than inner steps change nothing any more.
    if (segments > 0 && *peak == previous)
      break;
    previous = *peak;
  }
  return llvm::createStringError(llvm::formatv(
      "--memory-budget={0} bytes: no recomputation fits; the smallest peak "
      "is {1} bytes ({2}), without recomputation {3}",
      budgetBytes, smallest, describeRemat(smallestSegments),
      best.keptPeakBytes));
}

std::string metac::driver::describeRemat(int64_t segments) {
  if (segments == 0)
    return "no recomputation";
  if (segments >= kEveryStep)
    return "every inner step recomputed";
  return llvm::formatv("remat {0}", segments).str();
}

llvm::Expected<int64_t> metac::driver::parseRemat(llvm::StringRef text) {
  if (text.empty() || text == "off")
    return 0;
  if (text == "sqrt")
    return -1;
  if (text == "steps")
    return kEveryStep;
  int64_t segments = 0;
  if (text.getAsInteger(10, segments) || segments < 2)
    return llvm::createStringError(
        "--remat must be off, sqrt, steps or a number of segments >= 2, got '" +
        text.str() + "'");
  return segments;
}

llvm::Expected<uint64_t> metac::driver::parseBytes(llvm::StringRef text) {
  llvm::StringRef digits = text;
  uint64_t scale = 1;
  if (digits.consume_back("K") || digits.consume_back("KiB"))
    scale = 1ull << 10;
  else if (digits.consume_back("M") || digits.consume_back("MiB"))
    scale = 1ull << 20;
  else if (digits.consume_back("G") || digits.consume_back("GiB"))
    scale = 1ull << 30;
  uint64_t value = 0;
  if (digits.getAsInteger(10, value) || value == 0)
    return llvm::createStringError(
        "--memory-budget must be a positive number of bytes (with an optional "
        "K, M or G), got '" +
        text.str() + "'");
  return value * scale;
}
