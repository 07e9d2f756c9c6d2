//===- CalibrateCommand.cpp - `metac calibrate -o FILE` -------------------===//
//
// Measures the machine (lib/Calibrate) on every rank of the job, then rank
// 0 writes the cluster description: the notes on how each figure was
// measured as comments, the figures as YAML through the reader's own
// traits. The text is read back before it is written, so a file that
// `metac cluster` would refuse is never left behind.
//
//===----------------------------------------------------------------------===//

#include "metac/Calibrate/Calibrate.h"
#include "metac/Driver/Driver.h"
#include "metac/Planner/ClusterDescription.h"

#include "metart/comm.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace metac;

namespace {

constexpr const char *kUsage =
    "usage: metac calibrate -o FILE [--backend=cpu|cuda] [--quick] "
    "[--np=N] [--name=NAME] [--quiet]\n"
    "  measures this machine through the runtime (products, memory "
    "bandwidth,\n"
    "  call overhead, collectives between the job's ranks) and writes a "
    "cluster\n"
    "  description of one node with a device per rank (docs/planning.md);\n"
    "  run it under mpirun -np N, or with --np=N\n";

struct CalibrateArgs {
  std::string output, backend, name;
  bool quick = false, quiet = false;
  int64_t np = 0;
};

/// Reads `-o FILE`, `--flag=value` and `--flag value`; an error message
/// when the line is wrong.
std::optional<std::string> parse(int argc, char **argv, CalibrateArgs &args) {
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    llvm::StringRef flag = arg.split('=').first;
    bool inlineValue = arg.contains('=');
    auto next = [&]() -> std::optional<llvm::StringRef> {
      if (inlineValue)
        return arg.split('=').second;
      if (i + 1 < argc)
        return llvm::StringRef(argv[++i]);
      return std::nullopt;
    };
    if (flag == "--quick" || flag == "--quiet") {
      (flag == "--quick" ? args.quick : args.quiet) = true;
      continue;
    }
    if (flag != "-o" && flag != "--output" && flag != "--backend" &&
        flag != "--np" && flag != "--name")
      return "unknown argument '" + arg.str() + "'";
    std::optional<llvm::StringRef> text = next();
    if (!text || text->empty())
      return flag.str() + " needs a value";
    if (flag == "-o" || flag == "--output")
      args.output = text->str();
    else if (flag == "--name")
      args.name = text->str();
    else if (flag == "--backend")
      args.backend = text->str();
    else if (text->getAsInteger(10, args.np) || args.np < 1)
      return "--np must be a positive number of processes, got '" +
             text->str() + "'";
  }
  if (args.output.empty())
    return std::string("an output file is needed (-o FILE)");
  if (!args.backend.empty() && args.backend != "cpu" && args.backend != "cuda")
    return "--backend must be cpu or cuda, got '" + args.backend + "'";
  return std::nullopt;
}

/// The file's text: the notes as comments, then the description.
std::string render(const calibrate::Calibration &calibration) {
  std::string text;
  llvm::raw_string_ostream os(text);
  for (const std::string &line : calibration.notes)
    os << "# " << line << "\n";
  planner::writeClusterDescription(calibration.cluster, os);
  return text;
}

} // namespace

int metac::calibrateMain(int argc, char **argv) {
  if (argc > 2 && llvm::StringRef(argv[2]) == "--help") {
    llvm::outs() << kUsage;
    return 0;
  }
  CalibrateArgs args;
  if (std::optional<std::string> error = parse(argc, argv, args)) {
    llvm::errs() << "metac: error: " << *error << "\n" << kUsage;
    return 1;
  }
  if (args.np > 0)
    if (int code = launchWithMpirun(argc, argv, args.np); code >= 0)
      return code;

  calibrate::CalibrationOptions options;
  options.cuda = args.backend.empty()
                     ? metart_backend_available(METART_BACKEND_CUDA)
                     : args.backend == "cuda";
  options.quick = args.quick;
  options.name = args.name;
  options.progress = args.quiet ? nullptr : &llvm::errs();
  llvm::Expected<calibrate::Calibration> calibration =
      calibrate::calibrate(options);
  if (!calibration) {
    llvm::errs() << "metac: error: calibration failed: "
                 << llvm::toString(calibration.takeError()) << "\n";
    // The other ranks may be waiting in a collective.
    if (metart_world_size() > 1)
      metart_world_abort(1);
    return 1;
  }
  if (metart_world_rank() != 0)
    return 0;

  std::string text = render(*calibration);
  std::string check;
  llvm::raw_string_ostream checkStream(check);
  if (!planner::readClusterDescription(llvm::MemoryBufferRef(text, args.output),
                                       checkStream)) {
    llvm::errs() << "metac: error: the measured description does not read "
                    "back:\n"
                 << check;
    return 1;
  }
  std::error_code ec;
  llvm::ToolOutputFile output(args.output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::errs() << "metac: error: cannot write " << args.output << ": "
                 << ec.message() << "\n";
    return 1;
  }
  output.os() << text;
  output.keep();
  if (args.output != "-") {
    llvm::outs() << "wrote " << args.output << "\n";
    planner::printClusterSummary(calibration->cluster, llvm::outs());
  }
  return 0;
}
