//===- ImageFolder.cpp - N-way K-shot tasks on folders of PNG images ------===//
//
// One subdirectory per class, in name order, each with PNG images, in name
// order: all are decoded to luminance and resized when the handle is
// created (Omniglot's 32460 images of 105x105 are 25 MB as f32 at 28x28),
// and kept in the draw's type. Both splits draw from every class; the draw
// is ClassificationTasks'.
//
//===----------------------------------------------------------------------===//

#include "data/Classification.h"
#include "data/Png.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

using namespace metart::data;
namespace fs = std::filesystem;

namespace {

/// The largest image side.
constexpr int64_t kMaxImageSize = 4096;

/// A failure to load: the status and the message.
struct LoadError {
  metart_status status = METART_OK;
  std::string message;
};

/// Whether `name` is hidden (starts with '.').
bool hidden(const fs::path &path) {
  std::string name = path.filename().string();
  return !name.empty() && name[0] == '.';
}

/// Whether `path` ends in ".png", in any case.
bool isPng(const fs::path &path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return extension == ".png";
}

/// The entries of `directory` that `keep` accepts, sorted by name.
template <typename Keep>
LoadError list(const fs::path &directory, Keep keep,
               std::vector<fs::path> &out) {
  std::error_code ec;
  fs::directory_iterator it(directory, ec), end;
  for (; !ec && it != end; it.increment(ec))
    if (!hidden(it->path()) && keep(*it))
      out.push_back(it->path());
  if (ec)
    return {METART_ERROR_IO, "cannot read directory '" + directory.string() +
                                 "': " + ec.message()};
  std::sort(out.begin(), out.end());
  return {};
}

/// Lists and checks the classes, then decodes and resizes every image, kept
/// as values of type T.
template <typename T>
LoadError load(const metart_image_folder_config &config,
               std::shared_ptr<const ImageSet> &out) {
  const fs::path root = config.path;
  const int64_t side = config.image_size;
  std::vector<fs::path> classDirectories;
  if (LoadError e = list(
          root,
          [](const fs::directory_entry &entry) {
            std::error_code ec;
            return entry.is_directory(ec);
          },
          classDirectories);
      e.status)
    return e;
  if (classDirectories.empty())
    return {METART_ERROR_IO, "'" + root.string() +
                                 "' has no class folders (it needs one "
                                 "subdirectory of PNG images per class)"};
  if (static_cast<int64_t>(classDirectories.size()) < config.ways)
    return {METART_ERROR_INVALID_ARGUMENT,
            "'" + root.string() + "' has " +
                std::to_string(classDirectories.size()) +
                " class folders, fewer than ways (" +
                std::to_string(config.ways) + ")"};
  const size_t needed = static_cast<size_t>(config.shots + config.query);
  std::vector<std::vector<fs::path>> files(classDirectories.size());
  for (size_t c = 0; c < classDirectories.size(); ++c) {
    if (LoadError e = list(
            classDirectories[c],
            [](const fs::directory_entry &entry) {
              std::error_code ec;
              return isPng(entry.path()) && entry.is_regular_file(ec);
            },
            files[c]);
        e.status)
      return e;
    if (files[c].size() < needed)
      return {METART_ERROR_INVALID_ARGUMENT,
              "class folder '" + classDirectories[c].string() + "' has " +
                  std::to_string(files[c].size()) +
                  " PNG images, fewer than shots + query (" +
                  std::to_string(needed) + ")"};
  }

  std::vector<std::vector<uint32_t>> classes(classDirectories.size());
  std::vector<T> storage;
  GrayImage image;
  uint32_t id = 0;
  for (size_t c = 0; c < files.size(); ++c)
    for (const fs::path &file : files[c]) {
      if (id == UINT32_MAX)
        return {METART_ERROR_INVALID_ARGUMENT,
                "'" + root.string() + "' has more than 2^32 - 1 images"};
      if (std::string problem = decodePng(file.string(), image);
          !problem.empty())
        return {METART_ERROR_IO,
                "cannot decode '" + file.string() + "': " + problem};
      std::vector<double> resized = resizeArea(image, side, side);
      storage.insert(storage.end(), resized.begin(), resized.end());
      classes[c].push_back(id++);
    }
  out = std::make_shared<StoredImageSet<T>>(side, std::move(classes),
                                            std::move(storage));
  return {};
}

/// Checks an image folder configuration; returns the problem, or "".
std::string checkConfig(const metart_image_folder_config &config) {
  if (!config.path || !*config.path)
    return "path is null or empty";
  if (config.image_size < 1 || config.image_size > kMaxImageSize)
    return "image_size (" + std::to_string(config.image_size) +
           ") must be between 1 and " + std::to_string(kMaxImageSize);
  if (config.ways < 1)
    return "ways (" + std::to_string(config.ways) + ") must be at least 1";
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
metart_tasks_create_image_folder(const metart_image_folder_config *config,
                                 uint64_t seed, metart_tasks **out_tasks) {
  const char *function = "metart_tasks_create_image_folder";
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
  std::shared_ptr<const ImageSet> images;
  try {
    LoadError e = config->dtype == METART_F32 ? load<float>(*config, images)
                                              : load<double>(*config, images);
    if (e.status)
      return fail(e.status, std::move(e.message));
  } catch (const std::bad_alloc &) {
    return fail(METART_ERROR_OUT_OF_MEMORY, "out of memory");
  }
  std::vector<uint32_t> allowed(images->numClasses());
  for (size_t c = 0; c < allowed.size(); ++c)
    allowed[c] = static_cast<uint32_t>(c);
  return createTasks<ClassificationTasks>(
      function, out_tasks,
      EpisodeShape{config->ways, config->shots, config->query}, config->dtype,
      seed, images, images, std::move(allowed));
}
