//===- BenchCommand.cpp - `metac bench MATRIX.yaml -o DIR` ----------------===//
//
// Runs a benchmark matrix (lib/Bench): every point as its own `metac run`
// process (under mpirun when it asks for several), one JSON record per run
// written atomically, so an interrupted study resumes where it stopped;
// then renders DIR/report.md and its plots with bench/report/report.py in
// a virtual environment that has matplotlib.
//
//===----------------------------------------------------------------------===//

#include "metac/Bench/Matrix.h"
#include "metac/Bench/Process.h"
#include "metac/Bench/RunRecord.h"
#include "metac/Driver/Driver.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <ctime>

using namespace metac;
using namespace metac::bench;
namespace json = llvm::json;

namespace {

constexpr const char *kUsage =
    "usage: metac bench MATRIX.yaml -o DIR [--only=STUDY] [--dry-run] "
    "[--no-report] [--quiet]\n"
    "       metac bench --report DIR\n"
    "  runs every point of a benchmark matrix (docs/benchmarking.md) as a "
    "`metac run`,\n"
    "  one JSON record per run under DIR/runs (a rerun keeps the finished "
    "ones),\n"
    "  then writes DIR/report.md with tables and plots\n";

struct BenchArgs {
  std::string matrix, output, only, reportOnly;
  bool dryRun = false, noReport = false, quiet = false;
};

std::optional<std::string> parse(int argc, char **argv, BenchArgs &args) {
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto [flag, inlineValue] = arg.split('=');
    auto value = [&,
                  inlineValue = inlineValue]() -> std::optional<std::string> {
      if (arg.contains('='))
        return inlineValue.str();
      if (i + 1 < argc)
        return std::string(argv[++i]);
      return std::nullopt;
    };
    if (arg == "--dry-run" || arg == "--no-report" || arg == "--quiet") {
      (arg == "--dry-run" ? args.dryRun
       : arg == "--quiet" ? args.quiet
                          : args.noReport) = true;
    } else if (flag == "-o" || flag == "--output" || flag == "--only" ||
               flag == "--report") {
      std::optional<std::string> text = value();
      if (!text || text->empty())
        return flag.str() + " needs a value";
      (flag == "--only"     ? args.only
       : flag == "--report" ? args.reportOnly
                            : args.output) = *text;
    } else if (arg.starts_with("-")) {
      return "unknown argument '" + arg.str() + "'";
    } else if (args.matrix.empty()) {
      args.matrix = arg.str();
    } else {
      return "one matrix at a time, got '" + args.matrix + "' and '" +
             arg.str() + "'";
    }
  }
  if (!args.reportOnly.empty())
    return args.matrix.empty() && args.output.empty()
               ? std::nullopt
               : std::optional<std::string>(
                     "--report DIR renders an existing study: no matrix or -o");
  if (args.matrix.empty())
    return std::string("a matrix file is needed");
  if (args.output.empty() && !args.dryRun)
    return std::string("an output directory is needed (-o DIR)");
  return std::nullopt;
}

/// Writes `text` to `path` through a temporary file and a rename, so a
/// reader (and a resumed study) sees the whole file or none.
llvm::Error writeAtomically(llvm::StringRef path, llvm::StringRef text) {
  std::string temporary = (path + ".partial").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temporary, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return llvm::createStringError(ec, "cannot write %s: %s",
                                     temporary.c_str(), ec.message().c_str());
    os << text;
    os.close();
    if (os.has_error())
      return llvm::createStringError(os.error(), "cannot write %s",
                                     temporary.c_str());
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path))
    return llvm::createStringError(ec, "cannot rename %s: %s",
                                   temporary.c_str(), ec.message().c_str());
  return llvm::Error::success();
}

std::string pretty(const json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", value) << "\n";
  return text;
}

/// Whether `path` holds the record of a run that finished.
bool finished(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return false;
  llvm::Expected<json::Value> record = json::parse((*buffer)->getBuffer());
  if (!record) {
    llvm::consumeError(record.takeError());
    return false;
  }
  const json::Object *object = record->getAsObject();
  return object && object->getString("status") == "ok";
}

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string clock(double seconds) {
  int64_t s = static_cast<int64_t>(std::llround(seconds));
  return llvm::formatv("{0}:{1:2}", s / 60, s % 60).str();
}

/// The last lines of a run's output, for the record and the message.
std::string tail(llvm::StringRef text, size_t lines = 12) {
  text = text.rtrim();
  size_t at = text.size();
  for (size_t i = 0; i < lines && at != llvm::StringRef::npos && at > 0; ++i)
    at = text.rfind('\n', at - 1);
  return (at == llvm::StringRef::npos ? text : text.substr(at + 1)).str();
}

/// `metac run` for one point; its files start with `stem`. Checkpoints
/// a spec asks for go there too, not into the working directory.
std::vector<std::string> runCommand(llvm::StringRef self,
                                    const BenchPoint &point,
                                    llvm::StringRef stem) {
  std::vector<std::string> command{
      self.str(),
      "run",
      point.study->spec,
      "--quiet",
      (llvm::Twine("--metrics=") + stem + ".metrics.jsonl").str(),
      (llvm::Twine("--checkpoint-dir=") + stem + ".checkpoint").str(),
      "--iterations=" + std::to_string(point.study->iterations),
      "--seed=" + std::to_string(point.repetition)};
  for (const std::string &setting : point.settings)
    command.push_back("--set=" + setting);
  if (point.processes > 1)
    command.push_back("--np=" + std::to_string(point.processes));
  if (!point.mesh.empty())
    command.push_back("--mesh=" + point.mesh);
  llvm::append_range(command, point.flags);
  return command;
}

/// `word` as a POSIX shell reads it back.
std::string quoteForShell(const std::string &word) {
  if (llvm::all_of(word, [](char c) {
        return llvm::isAlnum(c) || llvm::StringRef("-_=.,/:+").contains(c);
      }))
    return word;
  std::string quoted = "'";
  for (char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The spec after the point's settings, as `--compile-to=ast` prints it.
json::Value resolvedSpec(llvm::StringRef self, const BenchPoint &point) {
  std::vector<std::string> command{self.str(), point.study->spec,
                                   "--compile-to=ast"};
  for (const std::string &setting : point.settings)
    command.push_back("--set=" + setting);
  ProcessResult result = runProcess(self, command, 60);
  if (result.exitCode != 0)
    return nullptr;
  return result.output;
}

std::string readFile(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  return buffer ? (*buffer)->getBuffer().str() : "";
}

/// One-line description of a finished run for the progress line.
std::string describe(const json::Object &summary) {
  std::string text;
  if (std::optional<double> s = summary.getNumber("seconds_per_iteration"))
    text += llvm::formatv("{0:f3} ms/it", *s * 1e3).str();
  if (const json::Array *evaluations = summary.getArray("evaluation"))
    if (!evaluations->empty())
      if (const json::Object *last = evaluations->back().getAsObject()) {
        if (std::optional<double> accuracy = last->getNumber("accuracy"))
          text += llvm::formatv(", accuracy {0:f4}", *accuracy).str();
        else if (std::optional<double> loss = last->getNumber("loss"))
          text += llvm::formatv(", eval loss {0:g}", *loss).str();
      }
  return text;
}

/// Renders DIR/report.md with the report script of this installation, in
/// the plotting virtual environment (made on first use).
int renderReport(llvm::StringRef self, llvm::StringRef directory, bool quiet) {
  llvm::SmallString<256> share(self);
  llvm::sys::path::remove_filename(share); // bin
  llvm::sys::path::remove_filename(share);
  llvm::sys::path::append(share, "share", "metac");
  llvm::SmallString<256> venvScript(share), reportScript(share);
  llvm::sys::path::append(venvScript, "plot-venv.sh");
  llvm::sys::path::append(reportScript, "report.py");
  if (!llvm::sys::fs::exists(reportScript)) {
    llvm::errs() << "metac: error: the report script is missing ("
                 << reportScript << ")\n";
    return 1;
  }
  llvm::ErrorOr<std::string> bash = llvm::sys::findProgramByName("bash");
  if (!bash) {
    llvm::errs() << "metac: error: rendering the report needs bash\n";
    return 1;
  }
  ProcessResult venv =
      runProcess(*bash, {"bash", venvScript.str().str()}, 1800);
  if (venv.exitCode != 0) {
    llvm::errs() << "metac: error: cannot prepare the plotting environment "
                    "(matplotlib in a virtual environment):\n"
                 << tail(venv.output) << "\n";
    return 1;
  }
  std::string python = tail(venv.output, 1);
  ProcessResult report = runProcess(
      python, {python, reportScript.str().str(), directory.str()}, 600);
  if (report.exitCode != 0) {
    llvm::errs() << "metac: error: the report failed:\n"
                 << tail(report.output, 20) << "\n";
    return 1;
  }
  if (!quiet)
    llvm::outs() << llvm::StringRef(report.output).rtrim() << "\n";
  return 0;
}

} // namespace

int metac::benchMain(int argc, char **argv) {
  if (argc > 2 && (llvm::StringRef(argv[2]) == "--help" ||
                   llvm::StringRef(argv[2]) == "-h")) {
    llvm::outs() << kUsage;
    return 0;
  }
  BenchArgs args;
  if (std::optional<std::string> error = parse(argc, argv, args)) {
    llvm::errs() << "metac: error: " << *error << "\n" << kUsage;
    return 1;
  }
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], nullptr);
  if (!args.reportOnly.empty())
    return renderReport(self, args.reportOnly, args.quiet);

  std::optional<Matrix> matrix = readMatrixFile(args.matrix, llvm::errs());
  if (!matrix)
    return 1;
  std::vector<BenchPoint> points = expandMatrix(*matrix);
  if (!args.only.empty()) {
    llvm::erase_if(points, [&](const BenchPoint &p) {
      return p.study->name != args.only;
    });
    if (points.empty()) {
      llvm::errs() << "metac: error: the matrix has no study named '"
                   << args.only << "'\n";
      return 1;
    }
  }
  for (const Study &study : matrix->studies)
    if (!llvm::sys::fs::exists(study.spec)) {
      llvm::errs() << args.matrix << ": error: study '" << study.name
                   << "': no spec at " << study.spec << "\n";
      return 1;
    }
  if (args.dryRun) {
    for (const BenchPoint &point : points)
      llvm::outs() << point.study->name << "/" << point.runName << ": "
                   << llvm::join(
                          llvm::map_range(runCommand("metac", point,
                                                     "DIR/" + point.runName),
                                          quoteForShell),
                          " ")
                   << "\n";
    return 0;
  }

  llvm::SmallString<256> runs(args.output);
  llvm::sys::path::append(runs, "runs");
  for (const Study &study : matrix->studies) {
    llvm::SmallString<256> directory(runs);
    llvm::sys::path::append(directory, study.name);
    if (std::error_code ec = llvm::sys::fs::create_directories(directory)) {
      llvm::errs() << "metac: error: cannot create " << directory << ": "
                   << ec.message() << "\n";
      return 1;
    }
  }
  json::Object environment = describeEnvironment();
  llvm::SmallString<256> environmentPath(args.output), matrixCopy(args.output);
  llvm::sys::path::append(environmentPath, "environment.json");
  llvm::sys::path::append(matrixCopy, "matrix.yaml");
  if (llvm::Error error = writeAtomically(
          environmentPath, pretty(json::Value(json::Object(environment))))) {
    llvm::errs() << "metac: error: " << llvm::toString(std::move(error))
                 << "\n";
    return 1;
  }
  (void)writeAtomically(matrixCopy, readFile(args.matrix));

  size_t kept = 0, failed = 0, done = 0;
  double spent = 0;
  auto begin = std::chrono::steady_clock::now();
  for (auto [index, point] : llvm::enumerate(points)) {
    llvm::SmallString<256> stem(runs);
    llvm::sys::path::append(stem, point.study->name, point.runName);
    std::string record = (stem + ".json").str();
    std::string progress =
        llvm::formatv("[{0}/{1}] {2} {3}", index + 1, points.size(),
                      point.study->name, point.runName)
            .str();
    if (finished(record)) {
      ++kept;
      continue;
    }
    std::string metrics = (stem + ".metrics.jsonl").str();
    std::string log = (stem + ".log").str();
    llvm::sys::fs::remove(metrics);
    std::vector<std::string> command = runCommand(self, point, stem);
    ProcessResult result = runProcess(
        self, command, static_cast<unsigned>(point.study->timeoutSeconds), log);
    ++done;
    spent += result.seconds;

    json::Object run;
    run["matrix"] = matrix->name;
    run["study"] = point.study->name;
    run["point"] = point.pointName;
    run["study_index"] = point.studyIndex;
    run["point_index"] = point.pointIndex;
    json::Object labels;
    for (const auto &[axis, label] : point.labels)
      labels[axis] = label;
    run["axes"] = std::move(labels);
    run["repetition"] = point.repetition;
    run["seed"] = point.repetition;
    run["processes"] = point.processes;
    run["mesh"] = point.mesh;
    run["scaling"] = point.study->scaling;
    if (point.study->peakFlops > 0)
      run["peak_flops"] = point.study->peakFlops;
    run["iterations_requested"] = point.study->iterations;
    run["command"] = json::Array(command);
    run["spec"] = point.study->spec;
    run["spec_text"] = readFile(point.study->spec);
    run["settings"] = json::Array(point.settings);
    run["flags"] = json::Array(point.flags);
    run["resolved_spec"] = resolvedSpec(self, point);
    run["started"] = timestamp();
    run["wall_seconds"] = result.seconds;
    run["exit_code"] = result.exitCode;
    run["environment"] = json::Object(environment);
    std::string outcome;
    if (result.exitCode == 0) {
      llvm::Expected<json::Object> summary = summarizeMetrics(metrics);
      if (summary) {
        outcome = describe(*summary);
        run["status"] = "ok";
        for (auto &[key, value] : *summary)
          run[key] = std::move(value);
      } else {
        run["status"] = "failed";
        run["error"] = llvm::toString(summary.takeError());
      }
    } else {
      run["status"] = "failed";
      run["error"] =
          result.exitCode < 0
              ? "the run did not finish: " + result.error
              : "metac run exited with " + std::to_string(result.exitCode);
    }
    if (*run.getString("status") != "ok") {
      ++failed;
      run["output_tail"] = tail(result.output);
      outcome =
          "FAILED: " + run.getString("error")->str() + " (see " + log + ")";
    }
    if (llvm::Error error =
            writeAtomically(record, pretty(json::Value(std::move(run))))) {
      llvm::errs() << "metac: error: " << llvm::toString(std::move(error))
                   << "\n";
      return 1;
    }
    if (!args.quiet) {
      double elapsed = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - begin)
                           .count();
      size_t left = points.size() - index - 1;
      llvm::errs() << "metac bench: " << progress << ": " << outcome << " ("
                   << llvm::formatv("{0:f1}", result.seconds) << " s; elapsed "
                   << clock(elapsed) << ", about " << clock(spent / done * left)
                   << " left)\n";
    }
  }
  llvm::outs() << "metac bench: " << points.size() << " runs in " << args.output
               << ": " << done << " ran, " << kept
               << " kept from an earlier run, " << failed << " failed\n";
  int status = failed ? 1 : 0;
  if (!args.noReport && renderReport(self, args.output, args.quiet))
    status = 1;
  return status;
}
