//===- TasksGen.cpp - task distributions to meta.tasks --------------------===//

#include "DeclGen.h"
#include "GenUtils.h"

#include "metac/Frontend/SafetensorsHeader.h"

#include "llvm/Support/Path.h"

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

namespace {

constexpr llvm::StringLiteral kKinds[] = {
    "sinusoid", "sequence", "fashion_mnist", "image_folder", "episodes"};

/// The runtime's largest sequence vocabulary (metart/data.h).
constexpr int64_t kMaxVocab = int64_t(1) << 20;

Type floatType(OpBuilder &b, StringRef dtype) {
  return dtype == "f64" ? Type(b.getF64Type()) : Type(b.getF32Type());
}

std::optional<std::string> readDtype(FieldReader &fields) {
  std::optional<std::string> dtype = fields.name("dtype", std::string("f32"));
  if (dtype && *dtype != "f32" && *dtype != "f64") {
    InFlightDiagnostic diag = fields.error(*fields.find("dtype"));
    diag << "dtype must be f32 or f64, got '" << *dtype << "'";
    attachDidYouMean(diag, *dtype, {"f32", "f64"});
    return std::nullopt;
  }
  return dtype;
}

/// Fields shared by the N-way K-shot classification kinds.
struct Episodic {
  int64_t ways, shots, query;
};

std::optional<Episodic> readEpisodic(FieldReader &fields) {
  auto ways = fields.integer("ways", std::nullopt, 2);
  auto shots = fields.integer("shots", std::nullopt, 1);
  auto query = fields.integer("query", std::nullopt, 1);
  if (!ways || !shots || !query)
    return std::nullopt;
  return Episodic{*ways, *shots, *query};
}

Type elementTypeOf(OpBuilder &b, StringRef dtype) {
  if (dtype == "F32")
    return b.getF32Type();
  if (dtype == "F64")
    return b.getF64Type();
  if (dtype == "F16")
    return b.getF16Type();
  if (dtype == "BF16")
    return b.getBF16Type();
  if (dtype == "I64")
    return b.getI64Type();
  if (dtype == "I32")
    return b.getI32Type();
  return nullptr;
}

} // namespace

meta::TasksOp metac::frontend::generateTasks(const TasksDecl &decl,
                                             SourceDiagnostics &diags,
                                             OpBuilder &builder,
                                             StringRef specDirectory) {
  if (!llvm::is_contained(kKinds, decl.kind)) {
    InFlightDiagnostic diag = diags.error(decl.kindLoc);
    diag << "unknown task distribution kind '" << decl.kind
         << "' (expected sinusoid, sequence, fashion_mnist, image_folder or "
            "episodes)";
    attachDidYouMean(
        diag, decl.kind,
        SmallVector<StringRef>(std::begin(kKinds), std::end(kKinds)));
    return nullptr;
  }
  std::string what = "task distribution '" + decl.name + "'";
  NamedAttrList config;
  Type input, target;
  int64_t support = 0, query = 0;
  std::optional<int64_t> ways;

  if (decl.kind == "sinusoid") {
    FieldReader fields(
        diags, decl.fields, what, decl.loc,
        {"amplitude", "phase", "input", "support", "query", "dtype"});
    auto amplitude = fields.range("amplitude", {0.1, 5.0});
    auto phase = fields.range("phase", {0.0, 3.14159265358979});
    auto range = fields.range("input", {-5.0, 5.0});
    auto s = fields.integer("support", 10, 1);
    auto q = fields.integer("query", 10, 1);
    auto dtype = readDtype(fields);
    if (fields.hadError() || !amplitude || !phase || !range || !s || !q ||
        !dtype)
      return nullptr;
    auto pair = [&](std::pair<double, double> p) {
      return builder.getF64ArrayAttr({p.first, p.second});
    };
    config.set("amplitude", pair(*amplitude));
    config.set("phase", pair(*phase));
    config.set("input", pair(*range));
    Type f = floatType(builder, *dtype);
    input = target = RankedTensorType::get({1}, f);
    support = *s;
    query = *q;
  } else if (decl.kind == "sequence") {
    FieldReader fields(diags, decl.fields, what, decl.loc,
                       {"vocab", "length", "support", "query"});
    auto vocab = fields.integer("vocab", 16, 2);
    auto length = fields.integer("length", 8, 2);
    auto s = fields.integer("support", 10, 1);
    auto q = fields.integer("query", 10, 1);
    if (fields.hadError() || !vocab || !length || !s || !q)
      return nullptr;
    // The runtime holds one permutation of the vocabulary per draw.
    if (*vocab > kMaxVocab) {
      fields.error(*fields.find("vocab"))
          << "field 'vocab' of " << what << " must be <= " << kMaxVocab
          << ", got " << *vocab;
      return nullptr;
    }
    config.set("vocab", builder.getI64IntegerAttr(*vocab));
    config.set("length", builder.getI64IntegerAttr(*length));
    input = target = RankedTensorType::get({*length}, builder.getI64Type());
    support = *s;
    query = *q;
  } else if (decl.kind == "fashion_mnist" || decl.kind == "image_folder") {
    bool folder = decl.kind == "image_folder";
    SmallVector<StringRef> known = {"ways", "shots", "query", "dtype"};
    known.append(folder ? SmallVector<StringRef>{"path", "image_size"}
                        : SmallVector<StringRef>{"classes", "path"});
    FieldReader fields(diags, decl.fields, what, decl.loc, known);
    auto episodic = readEpisodic(fields);
    auto dtype = readDtype(fields);
    int64_t side = 28;
    if (folder) {
      auto path = fields.string("path", std::nullopt);
      auto size = fields.integer("image_size", 28, 1);
      if (!path || !size)
        return nullptr;
      side = *size;
      config.set("path", builder.getStringAttr(*path));
    } else {
      auto classes = fields.integerList(
          "classes", std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0);
      auto path = fields.string("path", std::string());
      if (!classes || !path)
        return nullptr;
      for (int64_t c : *classes)
        if (c > 9) {
          fields.error(*fields.find("classes"))
              << "Fashion-MNIST classes are 0 to 9, got " << c;
          return nullptr;
        }
      if (episodic && static_cast<int64_t>(classes->size()) < episodic->ways) {
        // Without `classes`, the default ten: the error is the ways'.
        const Field *at = fields.find("classes");
        fields.error(at ? *at : *fields.find("ways"))
            << episodic->ways << "-way tasks need at least " << episodic->ways
            << " classes, got " << classes->size()
            << (at ? "" : " (all ten by default)");
        return nullptr;
      }
      config.set("classes", builder.getDenseI64ArrayAttr(*classes));
      if (!path->empty())
        config.set("path", builder.getStringAttr(*path));
    }
    if (fields.hadError() || !episodic || !dtype)
      return nullptr;
    config.set("shots", builder.getI64IntegerAttr(episodic->shots));
    input = RankedTensorType::get({1, side, side}, floatType(builder, *dtype));
    target = RankedTensorType::get({}, builder.getI64Type());
    ways = episodic->ways;
    support = episodic->ways * episodic->shots;
    query = episodic->ways * episodic->query;
  } else { // episodes
    FieldReader fields(diags, decl.fields, what, decl.loc, {"path", "ways"});
    auto path = fields.string("path", std::nullopt);
    // Classes per episode, for algorithms that need them (ProtoNets);
    // labels are then 0..ways-1.
    std::optional<int64_t> episodeWays;
    if (fields.find("ways"))
      episodeWays = fields.integer("ways", 2, 2);
    if (fields.hadError() || !path)
      return nullptr;
    ways = episodeWays;
    llvm::SmallString<256> resolved(*path);
    if (llvm::sys::path::is_relative(resolved)) {
      resolved = specDirectory;
      llvm::sys::path::append(resolved, *path);
    }
    const Field &pathField = *fields.find("path");
    auto header = readSafetensorsHeader(resolved);
    if (!header) {
      fields.error(pathField) << llvm::toString(header.takeError());
      return nullptr;
    }
    const char *names[] = {"support.x", "support.y", "query.x", "query.y"};
    Type types[4];
    for (int i = 0; i < 4; ++i) {
      auto it = header->find(names[i]);
      if (it == header->end()) {
        fields.error(pathField) << "episodes file '" << resolved
                                << "' has no tensor '" << names[i] << "'";
        return nullptr;
      }
      Type element = elementTypeOf(builder, it->second.dtype);
      if (!element || it->second.shape.size() < 2) {
        fields.error(pathField)
            << "tensor '" << names[i] << "' must have a leading task axis, a "
            << "sample axis and a float or integer dtype";
        return nullptr;
      }
      types[i] = RankedTensorType::get(it->second.shape, element);
    }
    auto shape = [&](int i) {
      return cast<RankedTensorType>(types[i]).getShape();
    };
    auto elem = [&](int i) {
      return cast<RankedTensorType>(types[i]).getElementType();
    };
    bool consistent =
        shape(0)[0] == shape(1)[0] && shape(0)[0] == shape(2)[0] &&
        shape(0)[0] == shape(3)[0] && shape(0)[1] == shape(1)[1] &&
        shape(2)[1] == shape(3)[1] &&
        shape(0).drop_front(2) == shape(2).drop_front(2) &&
        shape(1).drop_front(2) == shape(3).drop_front(2) &&
        elem(0) == elem(2) && elem(1) == elem(3);
    if (!consistent) {
      fields.error(pathField)
          << "episodes file '" << resolved
          << "' has inconsistent shapes: support.x " << formatType(types[0])
          << ", support.y " << formatType(types[1]) << ", query.x "
          << formatType(types[2]) << ", query.y " << formatType(types[3]);
      return nullptr;
    }
    input = RankedTensorType::get(shape(0).drop_front(2), elem(0));
    target = RankedTensorType::get(shape(1).drop_front(2), elem(1));
    support = shape(0)[1];
    query = shape(2)[1];
    config.set("path", builder.getStringAttr(resolved));
    config.set("count", builder.getI64IntegerAttr(shape(0)[0]));
  }

  auto op = meta::TasksOp::create(
      builder, diags.getLocation(decl.loc), builder.getStringAttr(decl.name),
      builder.getStringAttr(decl.kind), builder.getI64IntegerAttr(support),
      builder.getI64IntegerAttr(query),
      ways ? builder.getI64IntegerAttr(*ways) : IntegerAttr(),
      TypeAttr::get(input), TypeAttr::get(target),
      config.getDictionary(builder.getContext()));
  return op;
}
