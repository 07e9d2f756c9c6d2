//===- Matrix.cpp - read and expand benchmark matrices --------------------===//

#include "metac/Bench/Matrix.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"

#include <cmath>

using namespace metac::bench;
using llvm::yaml::IO;

namespace {

/// An axis as written: either `values` with templates in which `{}` stands
/// for the value, or explicit `points`.
struct AxisYaml {
  std::string name;
  std::vector<std::string> values;
  std::vector<std::string> settings, flags;
  std::string processes, mesh;
  std::vector<AxisValue> points;
};

struct StudyYaml {
  Study study;
  std::vector<AxisYaml> axes;
};

struct MatrixYaml {
  std::string name;
  int64_t iterations = 100;
  int64_t repetitions = 1;
  int64_t timeoutSeconds = 900;
  double peakFlops = 0;
  std::vector<StudyYaml> studies;
};

/// Labels and names become file names: a conservative character set.
bool isSafeName(llvm::StringRef name) {
  return !name.empty() && name != "." && name != ".." &&
         llvm::all_of(name, [](char c) {
           return llvm::isAlnum(c) || c == '_' || c == '-' || c == '.' ||
                  c == '+';
         });
}

std::string substitute(llvm::StringRef text, llvm::StringRef value) {
  std::string out;
  for (size_t at; (at = text.find("{}")) != llvm::StringRef::npos;) {
    out += text.substr(0, at);
    out += value;
    text = text.substr(at + 2);
  }
  return out + text.str();
}

bool failedAlready(IO &io) {
  return !io.outputting() && static_cast<llvm::yaml::Input &>(io).error();
}

} // namespace

LLVM_YAML_IS_SEQUENCE_VECTOR(AxisValue)
LLVM_YAML_IS_SEQUENCE_VECTOR(AxisYaml)
LLVM_YAML_IS_SEQUENCE_VECTOR(StudyYaml)

namespace llvm::yaml {

template <> struct MappingTraits<AxisValue> {
  static void mapping(IO &io, AxisValue &v) {
    io.mapRequired("label", v.label);
    io.mapOptional("set", v.settings);
    io.mapOptional("flags", v.flags);
    io.mapOptional("np", v.processes);
    io.mapOptional("mesh", v.mesh);
  }
  static std::string validate(IO &io, AxisValue &v) {
    if (failedAlready(io))
      return "";
    if (!isSafeName(v.label))
      return "label '" + v.label +
             "' must be letters, digits and _ - . + (it names files)";
    if (v.processes < 0)
      return "'np' must be at least 1";
    return "";
  }
};

template <> struct MappingTraits<AxisYaml> {
  static void mapping(IO &io, AxisYaml &a) {
    io.mapRequired("name", a.name);
    io.mapOptional("values", a.values);
    io.mapOptional("set", a.settings);
    io.mapOptional("flags", a.flags);
    io.mapOptional("np", a.processes);
    io.mapOptional("mesh", a.mesh);
    io.mapOptional("points", a.points);
  }
  static std::string validate(IO &io, AxisYaml &a) {
    if (failedAlready(io))
      return "";
    if (!isSafeName(a.name))
      return "axis name '" + a.name +
             "' must be letters, digits and _ - . + (it names files)";
    if (a.values.empty() == a.points.empty())
      return "axis '" + a.name +
             "' needs either 'values' (with templates in which {} stands "
             "for the value) or 'points', not both";
    if (!a.points.empty() && (!a.settings.empty() || !a.flags.empty() ||
                              !a.processes.empty() || !a.mesh.empty()))
      return "axis '" + a.name +
             "': 'set', 'flags', 'np' and 'mesh' belong to each of its "
             "points";
    llvm::StringSet<> labels;
    for (const std::string &value : a.values) {
      if (!isSafeName(value))
        return "value '" + value + "' of axis '" + a.name +
               "' must be letters, digits and _ - . + (it names files)";
      int64_t np;
      if (!a.processes.empty() &&
          (llvm::StringRef(substitute(a.processes, value))
               .getAsInteger(10, np) ||
           np < 1))
        return "axis '" + a.name +
               "': 'np' is not a positive integer for "
               "the value '" +
               value + "'";
      if (!labels.insert(value).second)
        return "axis '" + a.name + "' has the value '" + value + "' twice";
    }
    for (const AxisValue &v : a.points)
      if (!labels.insert(v.label).second)
        return "axis '" + a.name + "' has the label '" + v.label + "' twice";
    return "";
  }
};

template <> struct MappingTraits<StudyYaml> {
  static void mapping(IO &io, StudyYaml &s) {
    io.mapRequired("name", s.study.name);
    io.mapRequired("spec", s.study.spec);
    io.mapOptional("iterations", s.study.iterations);
    io.mapOptional("repetitions", s.study.repetitions);
    io.mapOptional("set", s.study.settings);
    io.mapOptional("flags", s.study.flags);
    io.mapOptional("np", s.study.processes);
    io.mapOptional("mesh", s.study.mesh);
    io.mapOptional("scaling", s.study.scaling);
    io.mapOptional("timeout", s.study.timeoutSeconds);
    io.mapOptional("peak_flops", s.study.peakFlops);
    io.mapOptional("axes", s.axes);
  }
  static std::string validate(IO &io, StudyYaml &s) {
    if (failedAlready(io))
      return "";
    if (!isSafeName(s.study.name))
      return "study name '" + s.study.name +
             "' must be letters, digits and _ - . + (it names a directory)";
    if (s.study.iterations < 0 || s.study.repetitions < 0 ||
        s.study.processes < 1 || s.study.timeoutSeconds < 0)
      return "study '" + s.study.name +
             "': 'iterations', 'repetitions', 'np' and 'timeout' must be "
             "positive";
    if (!(s.study.peakFlops >= 0) || std::isinf(s.study.peakFlops))
      return "study '" + s.study.name +
             "': 'peak_flops' must be a finite number of FLOP/s";
    if (s.study.scaling != "strong" && s.study.scaling != "weak")
      return "study '" + s.study.name +
             "': 'scaling' must be strong or "
             "weak, got '" +
             s.study.scaling + "'";
    llvm::StringSet<> names;
    for (const AxisYaml &axis : s.axes)
      if (!names.insert(axis.name).second)
        return "study '" + s.study.name + "' has the axis '" + axis.name +
               "' twice";
    return "";
  }
};

template <> struct MappingTraits<MatrixYaml> {
  static void mapping(IO &io, MatrixYaml &m) {
    io.mapOptional("name", m.name);
    io.mapOptional("iterations", m.iterations);
    io.mapOptional("repetitions", m.repetitions);
    io.mapOptional("timeout", m.timeoutSeconds);
    io.mapOptional("peak_flops", m.peakFlops);
    io.mapRequired("studies", m.studies);
  }
  static std::string validate(IO &io, MatrixYaml &m) {
    if (failedAlready(io))
      return "";
    if (m.iterations < 1 || m.repetitions < 1 || m.timeoutSeconds < 1)
      return "'iterations', 'repetitions' and 'timeout' must be positive";
    if (!(m.peakFlops >= 0) || std::isinf(m.peakFlops))
      return "'peak_flops' must be a finite number of FLOP/s";
    if (m.studies.empty())
      return "the matrix has no studies";
    llvm::StringSet<> names;
    for (const StudyYaml &s : m.studies)
      if (!names.insert(s.study.name).second)
        return "the study '" + s.study.name + "' is declared twice";
    return "";
  }
};

} // namespace llvm::yaml

std::optional<Matrix>
metac::bench::readMatrixFile(llvm::StringRef path,
                             llvm::raw_ostream &diagnostics) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    diagnostics << path << ": error: cannot read the matrix: "
                << file.getError().message() << "\n";
    return std::nullopt;
  }
  auto handler = [](const llvm::SMDiagnostic &diagnostic, void *context) {
    diagnostic.print(nullptr, *static_cast<llvm::raw_ostream *>(context));
  };
  llvm::yaml::Input input((*file)->getMemBufferRef(), nullptr, handler,
                          &diagnostics);
  MatrixYaml yaml;
  input >> yaml;
  if (input.error())
    return std::nullopt;

  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  Matrix matrix;
  matrix.name =
      yaml.name.empty() ? llvm::sys::path::stem(path).str() : yaml.name;
  for (StudyYaml &s : yaml.studies) {
    Study study = std::move(s.study);
    if (study.iterations == 0)
      study.iterations = yaml.iterations;
    if (study.repetitions == 0)
      study.repetitions = yaml.repetitions;
    if (llvm::sys::path::is_relative(study.spec) && !directory.empty()) {
      llvm::SmallString<256> spec(directory);
      llvm::sys::path::append(spec, study.spec);
      llvm::sys::path::remove_dots(spec, /*remove_dot_dot=*/true);
      study.spec = spec.str().str();
    }
    if (study.timeoutSeconds == 0)
      study.timeoutSeconds = yaml.timeoutSeconds;
    if (study.peakFlops == 0)
      study.peakFlops = yaml.peakFlops;
    for (AxisYaml &a : s.axes) {
      Axis axis;
      axis.name = a.name;
      axis.values = std::move(a.points);
      for (const std::string &value : a.values) {
        AxisValue v;
        v.label = value;
        for (const std::string &t : a.settings)
          v.settings.push_back(substitute(t, value));
        for (const std::string &t : a.flags)
          v.flags.push_back(substitute(t, value));
        if (!a.processes.empty())
          (void)llvm::StringRef(substitute(a.processes, value))
              .getAsInteger(10, v.processes);
        v.mesh = substitute(a.mesh, value);
        axis.values.push_back(std::move(v));
      }
      study.axes.push_back(std::move(axis));
    }
    matrix.studies.push_back(std::move(study));
  }
  return matrix;
}

std::vector<BenchPoint> metac::bench::expandMatrix(const Matrix &matrix) {
  std::vector<BenchPoint> points;
  for (auto [studyIndex, study] : llvm::enumerate(matrix.studies)) {
    int64_t pointIndex = 0;
    std::vector<BenchPoint> bases;
    // An odometer over the axes' values, the last axis fastest.
    std::vector<size_t> at(study.axes.size(), 0);
    while (true) {
      BenchPoint base;
      base.study = &study;
      base.settings = study.settings;
      base.flags = study.flags;
      base.processes = study.processes;
      base.mesh = study.mesh;
      std::vector<std::string> parts;
      for (auto [axis, index] : llvm::zip(study.axes, at)) {
        const AxisValue &v = axis.values[index];
        base.labels.emplace_back(axis.name, v.label);
        llvm::append_range(base.settings, v.settings);
        llvm::append_range(base.flags, v.flags);
        if (v.processes > 0)
          base.processes = v.processes;
        if (!v.mesh.empty())
          base.mesh = v.mesh;
        parts.push_back(axis.name + "=" + v.label);
      }
      base.pointName = parts.empty() ? "base" : llvm::join(parts, ",");
      base.studyIndex = static_cast<int64_t>(studyIndex);
      base.pointIndex = pointIndex++;
      bases.push_back(std::move(base));
      size_t axis = at.size();
      while (axis > 0 && ++at[axis - 1] == study.axes[axis - 1].values.size())
        at[--axis] = 0;
      if (axis == 0)
        break;
    }
    // Repetitions run in rounds (every point once, then again), so a
    // machine that is slower for a while widens the spread of every point
    // instead of biasing the points that ran then.
    for (int64_t r = 1; r <= study.repetitions; ++r)
      for (const BenchPoint &base : bases) {
        BenchPoint point = base;
        point.repetition = r;
        point.runName = base.pointName + ".r" + std::to_string(r);
        points.push_back(std::move(point));
      }
  }
  return points;
}
