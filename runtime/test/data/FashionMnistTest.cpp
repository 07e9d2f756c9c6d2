//===- FashionMnistTest.cpp - N-way K-shot tasks on Fashion-MNIST ---------===//
//
// Two datasets: small idx files written here (gzipped with zlib), whose
// images say which image they are, so the draw can be checked exactly (the
// episode layout, classes from the allowed list, images without
// replacement, uniform classes, train and test files, the errors for
// missing, corrupt and too small files); and the real Fashion-MNIST of
// Debian's dataset-fashion-mnist (tests skip without it), each drawn image
// looked up in the raw files read here.
//
//===----------------------------------------------------------------------===//

#include "TaskDraw.h"
#include "TestFiles.h"

#include "metart/data.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

using metart::test::drawTasks;
using metart::test::ScratchDirectory;

namespace {

using Draw = metart::test::TaskDraw<float, int64_t>;

constexpr const char *kFashionMnist = "/usr/share/datasets/fashion-mnist";
constexpr int64_t kPixels = 28 * 28;

metart_fashion_mnist_config fashionConfig(std::vector<int64_t> classes,
                                          int64_t ways, int64_t shots,
                                          int64_t query,
                                          const char *path = nullptr) {
  metart_fashion_mnist_config config{};
  config.path = path;
  for (size_t i = 0; i < classes.size() && i < 10; ++i)
    config.classes[i] = classes[i];
  config.num_classes = static_cast<int64_t>(classes.size());
  config.ways = ways;
  config.shots = shots;
  config.query = query;
  config.dtype = METART_F32;
  return config;
}

/// A handle that destroys itself.
struct Tasks {
  explicit Tasks(const metart_fashion_mnist_config &config,
                 uint64_t seed = 42) {
    EXPECT_EQ(metart_tasks_create_fashion_mnist(&config, seed, &tasks),
              METART_OK)
        << metart_tasks_last_error(nullptr);
  }
  ~Tasks() { metart_tasks_destroy(tasks); }
  Tasks(const Tasks &) = delete;
  Tasks &operator=(const Tasks &) = delete;

  metart_tasks *tasks = nullptr;
};

Draw draw(const Tasks &t, metart_split split, int64_t iteration, int64_t first,
          int64_t count) {
  return drawTasks<float, int64_t>(t.tasks, split, iteration, first, count);
}

/// The message and status of creating a distribution from `config`.
std::pair<metart_status, std::string>
createError(const metart_fashion_mnist_config &config) {
  metart_tasks *tasks = reinterpret_cast<metart_tasks *>(1);
  metart_status status = metart_tasks_create_fashion_mnist(&config, 0, &tasks);
  EXPECT_EQ(tasks, nullptr);
  metart_tasks_destroy(tasks);
  return {status, metart_tasks_last_error(nullptr)};
}

/// Reads a whole gzipped file ("" when it cannot).
std::string readGzip(const std::string &path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file)
    return {};
  std::string bytes;
  char chunk[1 << 16];
  int n = 0;
  while ((n = gzread(file, chunk, sizeof(chunk))) > 0)
    bytes.append(chunk, static_cast<size_t>(n));
  gzclose(file);
  return bytes;
}

/// Writes `bytes` gzipped to `path`.
void writeGzip(const std::string &path, const std::string &bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())),
            static_cast<int>(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

std::string bigEndian(uint32_t word) {
  return {static_cast<char>(word >> 24), static_cast<char>(word >> 16),
          static_cast<char>(word >> 8), static_cast<char>(word)};
}

/// An idx3 image file of `images` (28x28 bytes each) and the idx1 file of
/// their `labels`.
std::string idxImages(const std::vector<std::string> &images) {
  std::string bytes = bigEndian(0x803) + bigEndian(images.size()) +
                      bigEndian(28) + bigEndian(28);
  for (const std::string &image : images)
    bytes += image;
  return bytes;
}
std::string idxLabels(const std::vector<int> &labels) {
  std::string bytes = bigEndian(0x801) + bigEndian(labels.size());
  for (int label : labels)
    bytes += static_cast<char>(label);
  return bytes;
}

/// The raw images (784 bytes each) and labels of one split.
struct RawSplit {
  std::vector<std::string> images;
  std::vector<int> labels;
  /// The labels of the images with these bytes.
  std::map<std::string, std::set<int>> classesOf;

  void index() {
    for (size_t i = 0; i < images.size(); ++i)
      classesOf[images[i]].insert(labels[i]);
  }
};

/// The bytes of drawn image `j` of `x`, after checking that each pixel is
/// a byte over 255 as f32.
std::string imageBytes(const std::vector<float> &x, int64_t j) {
  std::string bytes(kPixels, '\0');
  for (int64_t p = 0; p < kPixels; ++p) {
    float value = x[j * kPixels + p];
    long byte = std::lround(value * 255.0);
    EXPECT_TRUE(byte >= 0 && byte <= 255 &&
                value == static_cast<float>(byte / 255.0))
        << "pixel " << p << " of image " << j << " is " << value;
    bytes[p] = static_cast<char>(byte);
  }
  return bytes;
}

/// Checks the episode layout of every task of `d` (labels class-major,
/// `shots` and `query` per label) and that the images of each label are
/// images of one class of `allowed` in `raw`, a different class per label;
/// returns the classes per task and label.
std::vector<std::vector<int>> checkTasks(const Draw &d, const RawSplit &raw,
                                         const std::set<int> &allowed,
                                         int64_t ways, int64_t shots,
                                         int64_t query) {
  std::vector<std::vector<int>> chosen(d.tasks);
  for (int64_t k = 0; k < d.tasks; ++k) {
    std::vector<std::set<int>> candidates(ways, allowed);
    for (bool isQuery : {false, true}) {
      int64_t perClass = isQuery ? query : shots, samples = ways * perClass;
      const auto &x = isQuery ? d.queryX : d.supportX;
      const auto &y = isQuery ? d.queryY : d.supportY;
      for (int64_t j = 0; j < samples; ++j) {
        int64_t label = y[k * samples + j];
        EXPECT_EQ(label, j / perClass) << "task " << k << " sample " << j;
        if (label < 0 || label >= ways)
          continue;
        auto found = raw.classesOf.find(imageBytes(x, k * samples + j));
        if (found == raw.classesOf.end()) {
          ADD_FAILURE() << "task " << k << " sample " << j
                        << " is no image of the split's file";
          continue;
        }
        std::set<int> both;
        for (int c : found->second)
          if (candidates[label].count(c))
            both.insert(c);
        candidates[label] = both;
      }
    }
    std::set<int> distinct;
    for (int64_t label = 0; label < ways; ++label) {
      EXPECT_FALSE(candidates[label].empty())
          << "task " << k << ": the images of label " << label
          << " are not of one allowed class";
      int c = candidates[label].empty() ? -1 : *candidates[label].begin();
      chosen[k].push_back(c);
      distinct.insert(c);
    }
    EXPECT_EQ(distinct.size(), static_cast<size_t>(ways))
        << "task " << k << " draws a class twice";
  }
  return chosen;
}

/// A dataset written by the test: class c has `perClass[c]` images in
/// train and test; image i of a split is filled with byte i (train) or
/// 255 - i (test), its first pixel is its class.
class SmallDataset : public ::testing::Test {
protected:
  void write(const std::vector<int> &trainPerClass,
             const std::vector<int> &testPerClass) {
    for (bool test : {false, true}) {
      RawSplit &split = test ? this->test : train;
      const std::vector<int> &perClass = test ? testPerClass : trainPerClass;
      // Interleave the classes, as the real files do.
      for (int round = 0;; ++round) {
        bool any = false;
        for (size_t c = 0; c < perClass.size(); ++c)
          if (round < perClass[c]) {
            int i = static_cast<int>(split.images.size());
            std::string image(kPixels, static_cast<char>(test ? 255 - i : i));
            image[0] = static_cast<char>(c);
            split.images.push_back(image);
            split.labels.push_back(static_cast<int>(c));
            any = true;
          }
        if (!any)
          break;
      }
      split.index();
      std::string prefix = dir.path(test ? "t10k" : "train");
      writeGzip(prefix + "-images-idx3-ubyte.gz", idxImages(split.images));
      writeGzip(prefix + "-labels-idx1-ubyte.gz", idxLabels(split.labels));
    }
  }

  ScratchDirectory dir;
  RawSplit train, test;
  std::string path =
      std::filesystem::path(dir.path("x")).parent_path().string();
};

TEST_F(SmallDataset, DescribesItsSamples) {
  write(std::vector<int>(10, 8), std::vector<int>(10, 6));
  Tasks t(fashionConfig({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 5, 2, 3, path.c_str()));
  int64_t support = 0, query = 0;
  metart_tasks_sizes(t.tasks, &support, &query);
  EXPECT_EQ(support, 10);
  EXPECT_EQ(query, 15);
  int32_t dtype = -1, rank = -1;
  const int64_t *shape = nullptr;
  ASSERT_EQ(metart_tasks_sample_type(t.tasks, 0, &dtype, &rank, &shape),
            METART_OK);
  EXPECT_EQ(dtype, METART_F32);
  ASSERT_EQ(rank, 3);
  EXPECT_EQ(std::vector<int64_t>(shape, shape + 3),
            (std::vector<int64_t>{1, 28, 28}));
  ASSERT_EQ(metart_tasks_sample_type(t.tasks, 1, &dtype, &rank, &shape),
            METART_OK);
  EXPECT_EQ(dtype, METART_I64);
  EXPECT_EQ(rank, 0);
}

TEST_F(SmallDataset, TasksAreEpisodesOfAllowedClassesWithoutReplacement) {
  // 5 + 3 images of each class in the test file: a class's images are
  // all of its test images.
  write(std::vector<int>(10, 12), std::vector<int>(10, 5));
  std::set<int> allowed = {1, 2, 4, 6, 7, 9};
  Tasks t(fashionConfig({1, 2, 4, 6, 7, 9}, 4, 2, 3, path.c_str()));
  for (metart_split split : {METART_SPLIT_TRAIN, METART_SPLIT_EVAL}) {
    Draw d = draw(t, split, 3, 0, 20);
    checkTasks(d, split == METART_SPLIT_TRAIN ? train : test, allowed, 4, 2, 3);
    for (int64_t k = 0; k < d.tasks; ++k) {
      std::set<std::string> seen;
      for (int64_t j = 0; j < 8; ++j)
        seen.insert(imageBytes(d.supportX, k * 8 + j));
      for (int64_t j = 0; j < 12; ++j)
        seen.insert(imageBytes(d.queryX, k * 12 + j));
      EXPECT_EQ(seen.size(), 20u) << "task " << k << " repeats an image";
    }
  }
}

TEST_F(SmallDataset, TrainAndEvalReadTheirOwnFiles) {
  write(std::vector<int>(10, 4), std::vector<int>(10, 4));
  Tasks t(fashionConfig({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 1, 1, path.c_str()));
  // Train image i is filled with i, test image i with 255 - i: the second
  // pixel tells the files apart (train's are below 40, test's above 215).
  Draw trainDraw = draw(t, METART_SPLIT_TRAIN, 0, 0, 10);
  Draw evalDraw = draw(t, METART_SPLIT_EVAL, 0, 0, 10);
  for (int64_t j = 0; j < 30; ++j) {
    EXPECT_LT(trainDraw.supportX[j * kPixels + 1] * 255, 40.5);
    EXPECT_GT(evalDraw.supportX[j * kPixels + 1] * 255, 214.5);
  }
}

TEST_F(SmallDataset, ADrawIsTheConcatenationOfItsSlices) {
  write(std::vector<int>(10, 10), std::vector<int>(10, 10));
  auto config = fashionConfig({0, 2, 3, 5, 8}, 3, 2, 2, path.c_str());
  Tasks t(config), same(config), other(config, 43);
  for (metart_split split : {METART_SPLIT_TRAIN, METART_SPLIT_EVAL}) {
    Draw whole = draw(t, split, 7, 0, 4);
    EXPECT_TRUE(whole == draw(t, split, 7, 0, 2) + draw(t, split, 7, 2, 2));
    EXPECT_TRUE(whole.slice(3, 1) == draw(t, split, 7, 3, 1));
    EXPECT_TRUE(whole == draw(same, split, 7, 0, 4));
    EXPECT_FALSE(whole == draw(other, split, 7, 0, 4));
    EXPECT_FALSE(whole == draw(t, split, 8, 0, 4));
  }
  EXPECT_FALSE(draw(t, METART_SPLIT_TRAIN, 7, 0, 4).supportY.empty());
}

TEST_F(SmallDataset, ClassesAreUniform) {
  // 2-way tasks over 5 classes: each class is label 0 of a fifth of the
  // tasks, and each unordered pair one tenth.
  write(std::vector<int>(10, 3), std::vector<int>(10, 3));
  std::set<int> allowed = {0, 3, 4, 7, 8};
  Tasks t(fashionConfig({0, 3, 4, 7, 8}, 2, 1, 0, path.c_str()));
  const int64_t tasks = 5000;
  Draw d = draw(t, METART_SPLIT_TRAIN, 1, 0, tasks);
  std::map<int, int64_t> first;
  std::map<std::set<int>, int64_t> pairs;
  for (int64_t k = 0; k < tasks; ++k) {
    int a = static_cast<unsigned char>(imageBytes(d.supportX, 2 * k).front());
    int b =
        static_cast<unsigned char>(imageBytes(d.supportX, 2 * k + 1).front());
    ASSERT_TRUE(allowed.count(a) && allowed.count(b) && a != b);
    ++first[a];
    ++pairs[{a, b}];
  }
  double n = tasks;
  ASSERT_EQ(first.size(), 5u);
  for (auto [c, count] : first)
    EXPECT_NEAR(count / n, 0.2, 5 * std::sqrt(0.2 * 0.8 / n)) << "class " << c;
  ASSERT_EQ(pairs.size(), 10u);
  for (const auto &[pair, count] : pairs)
    EXPECT_NEAR(count / n, 0.1, 5 * std::sqrt(0.1 * 0.9 / n));
}

TEST_F(SmallDataset, F64DrawsTheSameImages) {
  write(std::vector<int>(10, 4), std::vector<int>(10, 4));
  auto config = fashionConfig({0, 1, 2}, 2, 1, 1, path.c_str());
  Tasks f32(config);
  config.dtype = METART_F64;
  Tasks f64(config);
  Draw a = draw(f32, METART_SPLIT_TRAIN, 0, 0, 3);
  auto b = drawTasks<double, int64_t>(f64.tasks, METART_SPLIT_TRAIN, 0, 0, 3);
  ASSERT_EQ(a.supportX.size(), b.supportX.size());
  for (size_t i = 0; i < a.supportX.size(); ++i) {
    long byte = std::lround(b.supportX[i] * 255);
    ASSERT_EQ(b.supportX[i], byte / 255.0);
    ASSERT_EQ(a.supportX[i], static_cast<float>(b.supportX[i]));
  }
  EXPECT_EQ(a.supportY, b.supportY);
}

TEST_F(SmallDataset, ClassesNeedShotsPlusQueryImagesInBothFiles) {
  std::vector<int> train(10, 6), test(10, 6);
  test[4] = 3;
  write(train, test);
  auto [status, message] =
      createError(fashionConfig({2, 4, 6}, 2, 2, 2, path.c_str()));
  EXPECT_EQ(status, METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(message, "metart_tasks_create_fashion_mnist: class 4 has 3 test "
                     "images in '" +
                         path + "', fewer than shots + query (4)");
  // Without class 4 the same files are fine.
  Tasks t(fashionConfig({2, 6}, 2, 2, 2, path.c_str()));
  EXPECT_NE(t.tasks, nullptr);
}

TEST_F(SmallDataset, MissingAndCorruptFilesAreNamed) {
  write(std::vector<int>(10, 3), std::vector<int>(10, 3));
  auto config = fashionConfig({0, 1}, 2, 1, 1, path.c_str());
  std::string images = dir.path("train-images-idx3-ubyte.gz");
  std::string labels = dir.path("t10k-labels-idx1-ubyte.gz");
  std::string prefix = "metart_tasks_create_fashion_mnist: ";

  // A truncated gzip stream.
  std::string gz = metart::test::readFile(images);
  ASSERT_GT(gz.size(), 100u);
  metart::test::writeFile(images, gz.substr(0, gz.size() / 2));
  auto [status, message] = createError(config);
  EXPECT_EQ(status, METART_ERROR_IO);
  EXPECT_EQ(
      message.rfind(prefix + "'" + images + "' is corrupt or truncated (", 0),
      0u)
      << message;

  // Gzipped, but not an idx3 file.
  writeGzip(images, "not an idx file at all");
  std::tie(status, message) = createError(config);
  EXPECT_EQ(status, METART_ERROR_IO);
  EXPECT_EQ(message, prefix + "'" + images +
                         "' is not an idx3 image file (no magic number "
                         "0x00000803)");

  // Fewer bytes than the header says.
  writeGzip(images, idxImages(train.images).substr(0, 16 + 784 * 2 + 5));
  std::tie(status, message) = createError(config);
  EXPECT_EQ(status, METART_ERROR_IO);
  EXPECT_EQ(message, prefix + "'" + images + "' is corrupt: 30 items need " +
                         std::to_string(16 + 30 * 784) + " bytes, it has " +
                         std::to_string(16 + 784 * 2 + 5) + " (truncated)");
  writeGzip(images, idxImages(train.images));

  // Labels out of range, and a missing file.
  std::vector<int> badLabels = test.labels;
  badLabels[7] = 12;
  writeGzip(labels, idxLabels(badLabels));
  std::tie(status, message) = createError(config);
  EXPECT_EQ(status, METART_ERROR_IO);
  EXPECT_EQ(message,
            prefix + "'" + labels + "' is corrupt: label 7 is 12, not 0 to 9");
  std::filesystem::remove(labels);
  std::tie(status, message) = createError(config);
  EXPECT_EQ(status, METART_ERROR_IO);
  EXPECT_EQ(message,
            prefix + "cannot open '" + labels + "': No such file or directory");

  // A directory without the files.
  config.path = "/nonexistent/fashion";
  std::tie(status, message) = createError(config);
  EXPECT_EQ(status, METART_ERROR_IO);
  EXPECT_EQ(message, prefix + "cannot open '/nonexistent/fashion/"
                              "train-images-idx3-ubyte.gz': No such file or "
                              "directory");
}

TEST_F(SmallDataset, UncompressedFilesAreReadToo) {
  write(std::vector<int>(10, 3), std::vector<int>(10, 3));
  for (const char *name :
       {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"}) {
    std::string gz = dir.path(std::string(name) + ".gz");
    metart::test::writeFile(dir.path(name), readGzip(gz));
    std::filesystem::remove(gz);
  }
  Tasks t(fashionConfig({0, 1, 2}, 2, 1, 1, path.c_str()));
  Draw d = draw(t, METART_SPLIT_TRAIN, 0, 0, 4);
  checkTasks(d, train, {0, 1, 2}, 2, 1, 1);
}

TEST(FashionMnist, CreateChecksTheConfiguration) {
  std::string prefix = "metart_tasks_create_fashion_mnist: ";
  auto expectError = [&](const metart_fashion_mnist_config &config,
                         const std::string &message) {
    auto [status, text] = createError(config);
    EXPECT_EQ(status, METART_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(text, prefix + message);
  };
  expectError(fashionConfig({}, 1, 1, 1), "num_classes (0) must be between 1 "
                                          "and 10");
  expectError(fashionConfig({1, 10}, 2, 1, 1), "class 10 is not 0 to 9");
  expectError(fashionConfig({1, 3, 1}, 2, 1, 1), "class 1 is listed twice");
  expectError(fashionConfig({1, 3}, 3, 1, 1),
              "ways (3) must be between 1 and the number of classes (2)");
  expectError(fashionConfig({1, 3}, 2, 0, 1),
              "shots (0) must be between 1 and 16777216, query (1) between 0 "
              "and 16777216");
  auto config = fashionConfig({1, 3}, 2, 1, 1);
  config.dtype = METART_I64;
  expectError(config, "dtype 3 is not METART_F32 or METART_F64");
  metart_tasks *tasks = nullptr;
  EXPECT_EQ(metart_tasks_create_fashion_mnist(nullptr, 0, &tasks),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(metart_tasks_last_error(nullptr)),
            prefix + "config is null");
}

/// The real dataset, read here with zlib.
class RealFashionMnist : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kFashionMnist))
      return;
    for (bool test : {false, true}) {
      RawSplit &split = test ? testRaw : trainRaw;
      std::string prefix =
          std::string(kFashionMnist) + (test ? "/t10k" : "/train");
      std::string images = readGzip(prefix + "-images-idx3-ubyte.gz");
      std::string labels = readGzip(prefix + "-labels-idx1-ubyte.gz");
      for (size_t i = 0; 16 + (i + 1) * kPixels <= images.size(); ++i) {
        split.images.push_back(images.substr(16 + i * kPixels, kPixels));
        split.labels.push_back(static_cast<unsigned char>(labels[8 + i]));
      }
      split.index();
    }
  }
  void SetUp() override {
    if (!std::filesystem::exists(kFashionMnist))
      GTEST_SKIP() << kFashionMnist << " is absent (Debian package "
                   << "dataset-fashion-mnist)";
  }

  static RawSplit trainRaw, testRaw;
};
RawSplit RealFashionMnist::trainRaw, RealFashionMnist::testRaw;

TEST_F(RealFashionMnist, TheFilesHaveTheirUsualSizes) {
  EXPECT_EQ(trainRaw.images.size(), 60000u);
  EXPECT_EQ(testRaw.images.size(), 10000u);
}

TEST_F(RealFashionMnist, TasksAreImagesOfAllowedClasses) {
  std::set<int> allowed = {0, 2, 3, 5, 6, 8, 9};
  auto config = fashionConfig({0, 2, 3, 5, 6, 8, 9}, 5, 2, 3);
  Tasks t(config);
  Draw trainDraw = draw(t, METART_SPLIT_TRAIN, 11, 0, 6);
  auto chosen = checkTasks(trainDraw, trainRaw, allowed, 5, 2, 3);
  Draw evalDraw = draw(t, METART_SPLIT_EVAL, 11, 0, 6);
  checkTasks(evalDraw, testRaw, allowed, 5, 2, 3);
  // The evaluation draws the test file's images, which training never sees.
  int64_t inTrain = 0;
  for (int64_t j = 0; j < 6 * 15; ++j)
    inTrain += trainRaw.classesOf.count(imageBytes(evalDraw.queryX, j));
  EXPECT_LT(inTrain, 6 * 15);
  EXPECT_NE(chosen[0], chosen[1]);
}

TEST_F(RealFashionMnist, ADrawIsTheConcatenationOfItsSlices) {
  Tasks t(fashionConfig({0, 1, 2, 3, 4, 5, 6}, 5, 1, 15));
  for (metart_split split : {METART_SPLIT_TRAIN, METART_SPLIT_EVAL}) {
    Draw whole = draw(t, split, 0, 0, 4);
    EXPECT_TRUE(whole == draw(t, split, 0, 0, 2) + draw(t, split, 0, 2, 2));
  }
}

TEST_F(RealFashionMnist, ClassesNeedEnoughTestImages) {
  // 1000 test images per class.
  auto [status, message] = createError(fashionConfig({0, 1}, 2, 500, 501));
  EXPECT_EQ(status, METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(message, std::string("metart_tasks_create_fashion_mnist: class 0 "
                                 "has 1000 test images in '") +
                         kFashionMnist + "', fewer than shots + query (1001)");
}

} // namespace
