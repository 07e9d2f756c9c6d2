//===- FashionMnist.cpp - N-way K-shot tasks on Fashion-MNIST -------------===//
//
// Reads the idx files (big-endian: a magic number, the counts, then one
// byte per pixel or label) with zlib, which reads gzipped and plain files
// alike: `train-*` for METART_SPLIT_TRAIN, `t10k-*` for METART_SPLIT_EVAL.
// The images are kept as bytes, grouped by label, and shared by every
// handle of the process that reads the same directory; the draw itself is
// ClassificationTasks'.
//
//===----------------------------------------------------------------------===//

#include "data/Classification.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <sys/stat.h>
#include <utility>

using namespace metart::data;

namespace {

/// The directory the Debian package dataset-fashion-mnist installs.
constexpr const char *kDefaultDirectory = "/usr/share/datasets/fashion-mnist";
constexpr int64_t kSide = 28;
constexpr int64_t kClasses = 10;
constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;

/// A failure to load: the status and the message.
struct LoadError {
  metart_status status = METART_OK;
  std::string message;
};

bool exists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

/// Reads the whole file at `path` through zlib into `bytes`.
LoadError readCompressed(const std::string &path, std::string &bytes) {
  errno = 0;
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file)
    return {METART_ERROR_IO,
            "cannot open '" + path +
                "': " + (errno ? std::strerror(errno) : "out of memory")};
  bytes.clear();
  char chunk[1 << 16];
  int read = 0;
  while ((read = gzread(file, chunk, sizeof(chunk))) > 0)
    bytes.append(chunk, static_cast<size_t>(read));
  int code = Z_OK;
  const char *message = gzerror(file, &code);
  std::string problem;
  if (code == Z_ERRNO)
    problem = std::strerror(errno);
  else if (read < 0 || code != Z_OK)
    problem = message;
  int closed = gzclose(file);
  if (problem.empty() && closed == Z_BUF_ERROR)
    problem = "unexpected end of file";
  else if (problem.empty() && closed != Z_OK)
    problem = "zlib error " + std::to_string(closed);
  if (code == Z_ERRNO)
    return {METART_ERROR_IO, "cannot read '" + path + "': " + problem};
  if (!problem.empty())
    return {METART_ERROR_IO,
            "'" + path + "' is corrupt or truncated (" + problem + ")"};
  return {};
}

/// The big-endian 32-bit word at `offset` of `bytes`.
uint32_t word(const std::string &bytes, size_t offset) {
  auto byte = [&](size_t i) {
    return static_cast<uint32_t>(static_cast<unsigned char>(bytes[offset + i]));
  };
  return byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
}

/// Checks that `bytes` of `path` are an idx file with `magic` and `header`
/// bytes of header followed by `count` items of `itemSize` bytes.
LoadError checkSize(const std::string &path, const std::string &bytes,
                    size_t header, uint64_t count, uint64_t itemSize) {
  uint64_t expected = header + count * itemSize;
  if (bytes.size() == expected)
    return {};
  return {METART_ERROR_IO,
          "'" + path + "' is corrupt: " + std::to_string(count) +
              " items need " + std::to_string(expected) + " bytes, it has " +
              std::to_string(bytes.size()) +
              (bytes.size() < expected ? " (truncated)" : "")};
}

/// The path of idx file `name` in `directory`: `name`.gz, or `name` when
/// only an uncompressed file is there.
std::string idxPath(const std::string &directory, const std::string &name) {
  std::string gz = directory + "/" + name + ".gz";
  std::string plain = directory + "/" + name;
  return !exists(gz) && exists(plain) ? plain : gz;
}

/// Loads the images of `prefix` ("train" or "t10k") from `directory`.
LoadError loadSplit(const std::string &directory, const std::string &prefix,
                    std::shared_ptr<const ImageSet> &out) {
  std::string imagesPath = idxPath(directory, prefix + "-images-idx3-ubyte");
  std::string labelsPath = idxPath(directory, prefix + "-labels-idx1-ubyte");
  std::string images, labels;
  if (LoadError e = readCompressed(imagesPath, images); e.status)
    return e;
  if (LoadError e = readCompressed(labelsPath, labels); e.status)
    return e;
  if (images.size() < 16 || word(images, 0) != kImagesMagic)
    return {METART_ERROR_IO, "'" + imagesPath +
                                 "' is not an idx3 image file (no magic "
                                 "number 0x00000803)"};
  if (labels.size() < 8 || word(labels, 0) != kLabelsMagic)
    return {METART_ERROR_IO, "'" + labelsPath +
                                 "' is not an idx1 label file (no magic "
                                 "number 0x00000801)"};
  uint64_t count = word(images, 4);
  uint32_t rows = word(images, 8), columns = word(images, 12);
  if (rows != kSide || columns != kSide)
    return {METART_ERROR_IO,
            "'" + imagesPath + "' holds " + std::to_string(rows) + "x" +
                std::to_string(columns) + " images, not 28x28"};
  if (LoadError e = checkSize(imagesPath, images, 16, count, kSide * kSide);
      e.status)
    return e;
  uint64_t labelCount = word(labels, 4);
  if (LoadError e = checkSize(labelsPath, labels, 8, labelCount, 1); e.status)
    return e;
  if (labelCount != count)
    return {METART_ERROR_IO, "'" + labelsPath + "' has " +
                                 std::to_string(labelCount) + " labels for " +
                                 std::to_string(count) + " images"};
  std::vector<std::vector<uint32_t>> classes(kClasses);
  for (uint64_t i = 0; i < count; ++i) {
    auto label = static_cast<unsigned char>(labels[8 + i]);
    if (label >= kClasses)
      return {METART_ERROR_IO, "'" + labelsPath + "' is corrupt: label " +
                                   std::to_string(i) + " is " +
                                   std::to_string(label) + ", not 0 to 9"};
    classes[label].push_back(static_cast<uint32_t>(i));
  }
  std::vector<uint8_t> pixels(images.begin() + 16, images.end());
  out = std::make_shared<StoredImageSet<uint8_t>>(kSide, std::move(classes),
                                                  std::move(pixels));
  return {};
}

/// The images of a split loaded by a live handle, by directory and prefix.
std::mutex cacheMutex;
std::map<std::string, std::weak_ptr<const ImageSet>> cache;

/// Loads a split, or shares the one a live handle loaded.
LoadError loadShared(const std::string &directory, const std::string &prefix,
                     std::shared_ptr<const ImageSet> &out) {
  std::lock_guard<std::mutex> lock(cacheMutex);
  std::string key = directory + "/" + prefix;
  if ((out = cache[key].lock()))
    return {};
  LoadError e = loadSplit(directory, prefix, out);
  if (!e.status)
    cache[key] = out;
  return e;
}

/// Checks a Fashion-MNIST configuration; returns the problem, or "".
std::string checkConfig(const metart_fashion_mnist_config &config) {
  if (config.num_classes < 1 || config.num_classes > kClasses)
    return "num_classes (" + std::to_string(config.num_classes) +
           ") must be between 1 and 10";
  bool seen[kClasses] = {};
  for (int64_t i = 0; i < config.num_classes; ++i) {
    int64_t c = config.classes[i];
    if (c < 0 || c >= kClasses)
      return "class " + std::to_string(c) + " is not 0 to 9";
    if (seen[c])
      return "class " + std::to_string(c) + " is listed twice";
    seen[c] = true;
  }
  if (config.ways < 1 || config.ways > config.num_classes)
    return "ways (" + std::to_string(config.ways) + ") must be between 1 and " +
           "the number of classes (" + std::to_string(config.num_classes) + ")";
  if (std::string problem = checkShotsAndQuery(config.shots, config.query);
      !problem.empty())
    return problem;
  if (config.dtype != METART_F32 && config.dtype != METART_F64)
    return "dtype " + std::to_string(config.dtype) +
           " is not METART_F32 or METART_F64";
  return {};
}

} // namespace

metart_status
metart_tasks_create_fashion_mnist(const metart_fashion_mnist_config *config,
                                  uint64_t seed, metart_tasks **out_tasks) {
  const char *function = "metart_tasks_create_fashion_mnist";
  auto fail = [&](metart_status status, std::string message) {
    setTasksError(nullptr, std::string(function) + ": " + std::move(message));
    return status;
  };
  if (!out_tasks)
    return fail(METART_ERROR_INVALID_ARGUMENT, "out_tasks is null");
  *out_tasks = nullptr;
  if (!config)
    return fail(METART_ERROR_INVALID_ARGUMENT, "config is null");
  if (std::string problem = checkConfig(*config); !problem.empty())
    return fail(METART_ERROR_INVALID_ARGUMENT, std::move(problem));
  std::string directory =
      config->path && *config->path ? config->path : kDefaultDirectory;
  std::shared_ptr<const ImageSet> train, test;
  try {
    for (auto [prefix, set] :
         {std::pair("train", &train), std::pair("t10k", &test)})
      if (LoadError e = loadShared(directory, prefix, *set); e.status)
        return fail(e.status, std::move(e.message));
  } catch (const std::bad_alloc &) {
    return fail(METART_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  const uint64_t needed = config->shots + config->query;
  std::vector<uint32_t> allowed;
  for (int64_t i = 0; i < config->num_classes; ++i) {
    auto c = static_cast<uint32_t>(config->classes[i]);
    for (auto [name, set] :
         {std::pair("training", &train), std::pair("test", &test)})
      if ((*set)->imagesOf(c).size() < needed)
        return fail(METART_ERROR_INVALID_ARGUMENT,
                    "class " + std::to_string(c) + " has " +
                        std::to_string((*set)->imagesOf(c).size()) + " " +
                        name + " images in '" + directory +
                        "', fewer than shots + query (" +
                        std::to_string(needed) + ")");
    allowed.push_back(c);
  }
  return createTasks<ClassificationTasks>(
      function, out_tasks,
      EpisodeShape{config->ways, config->shots, config->query}, config->dtype,
      seed, std::move(train), std::move(test), std::move(allowed));
}
