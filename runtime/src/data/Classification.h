//===- Classification.h - N-way K-shot image classification -----*- C++ -*-===//
//
// What Fashion-MNIST and image folders share: images grouped by class, and
// the episodic draw over them (metart/data.h): a task chooses `ways`
// distinct classes of the allowed ones, labels them 0..ways-1 in the order
// drawn, and takes shots + query distinct images of each, class-major.
// Each task's classes, and each chosen class's images, come from their own
// counter-based stream, so a task never depends on which others are drawn
// with it.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_DATA_CLASSIFICATION_H
#define METART_SRC_DATA_CLASSIFICATION_H

#include "data/Tasks.h"

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace metart::data {

/// Square one-channel images grouped by class. Image `id` is the `id`-th of
/// the storage; what the storage holds is the subclass's business.
class ImageSet {
public:
  ImageSet(int64_t side, std::vector<std::vector<uint32_t>> classes)
      : imageSide(side), classImages(std::move(classes)) {}
  virtual ~ImageSet() = default;

  int64_t side() const { return imageSide; }
  int64_t pixels() const { return imageSide * imageSide; }
  size_t numClasses() const { return classImages.size(); }
  /// The ids of the images of class `c`.
  const std::vector<uint32_t> &imagesOf(size_t c) const {
    return classImages[c];
  }

  /// Writes the pixels of image `id` (values in [0, 1]).
  virtual void write(uint32_t id, float *out) const = 0;
  virtual void write(uint32_t id, double *out) const = 0;

private:
  int64_t imageSide;
  std::vector<std::vector<uint32_t>> classImages;
};

/// An image set holding its pixels as `Stored`: 8-bit intensities, written
/// as intensity / 255 (computed in double, rounded once to the output
/// type), or values in [0, 1] already, written as they are.
template <typename Stored> class StoredImageSet final : public ImageSet {
public:
  StoredImageSet(int64_t side, std::vector<std::vector<uint32_t>> classes,
                 std::vector<Stored> storage)
      : ImageSet(side, std::move(classes)), storage(std::move(storage)) {}

  void write(uint32_t id, float *out) const override { writeAs(id, out); }
  void write(uint32_t id, double *out) const override { writeAs(id, out); }

private:
  template <typename T> void writeAs(uint32_t id, T *out) const {
    const int64_t n = pixels();
    const Stored *in = storage.data() + static_cast<size_t>(id) * n;
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<Stored, uint8_t>)
        out[i] = static_cast<T>(in[i] / 255.0);
      else
        out[i] = static_cast<T>(in[i]);
    }
  }

  std::vector<Stored> storage;
};

/// Ways, shots and query images per class of every task.
struct EpisodeShape {
  int64_t ways;
  int64_t shots;
  int64_t query;
};

/// Checks the images per class of a configuration: shots at least 1,
/// query not negative, both at most 2^24; returns the problem, or "".
std::string checkShotsAndQuery(int64_t shots, int64_t query);

/// N-way K-shot tasks: inputs dtype[1, side, side], targets METART_I64
/// scalars. METART_SPLIT_TRAIN draws from `train`, METART_SPLIT_EVAL from
/// `eval` (which may be the same set); `allowed` lists the classes tasks
/// choose from, distinct, each with at least shots + query images in both
/// sets (the creators check).
class ClassificationTasks : public TaskSource {
public:
  ClassificationTasks(EpisodeShape shape, int32_t dtype, uint64_t seed,
                      std::shared_ptr<const ImageSet> train,
                      std::shared_ptr<const ImageSet> eval,
                      std::vector<uint32_t> allowed);

  void draw(metart_split split, int64_t iteration, int64_t first, int64_t count,
            const DrawBuffers &buffers) const override;

private:
  template <typename T>
  void drawAs(metart_split split, int64_t iteration, int64_t first,
              int64_t count, const DrawBuffers &buffers) const;

  EpisodeShape shape;
  int32_t dtype;
  uint64_t seed;
  std::shared_ptr<const ImageSet> train, eval;
  std::vector<uint32_t> allowed;
};

} // namespace metart::data

#endif // METART_SRC_DATA_CLASSIFICATION_H
