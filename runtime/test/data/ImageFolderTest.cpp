//===- ImageFolderTest.cpp - N-way K-shot tasks on folders of PNGs --------===//
//
// PNGs written here with libpng in every colour type (gray of 1 to 16
// bits, gray + alpha, RGB, RGBA, palette, interlaced) decode to the
// luminance computed here; area resizing averages what it should; a folder
// of six classes of five images draws episodes whose every label holds
// all the images of one class; and bad folders are refused with messages
// naming the directory or file.
//
//===----------------------------------------------------------------------===//

#include "TaskDraw.h"
#include "TestFiles.h"

#include "data/Png.h"
#include "metart/data.h"

#include <gtest/gtest.h>
#include <png.h>

#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

using metart::data::decodePng;
using metart::data::GrayImage;
using metart::data::resizeArea;
using metart::test::drawTasks;
using metart::test::ScratchDirectory;

namespace {

/// Writes a PNG of `width` x `height` with `rows` of packed samples.
bool writePng(const std::string &path, int width, int height, int colorType,
              int bitDepth, const std::vector<std::vector<png_byte>> &rows,
              const std::vector<png_color> &palette = {},
              bool interlaced = false) {
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return false;
  png_structp png =
      png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  std::vector<png_bytep> pointers;
  for (const auto &row : rows)
    pointers.push_back(const_cast<png_bytep>(row.data()));
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(file);
    return false;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, width, height, bitDepth, colorType,
               interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (!palette.empty())
    png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
  png_write_info(png, info);
  png_write_image(png, pointers.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return std::fclose(file) == 0;
}

double luminance(int r, int g, int b, double scale = 255.0) {
  return 0.299 * (r / scale) + 0.587 * (g / scale) + 0.114 * (b / scale);
}

/// The 256-entry palette of the palette images.
std::vector<png_color> palette() {
  std::vector<png_color> colors(256);
  for (int i = 0; i < 256; ++i)
    colors[i] = {static_cast<png_byte>(i), static_cast<png_byte>(255 - i),
                 static_cast<png_byte>((i * 7) % 256)};
  return colors;
}

constexpr int kClasses = 6, kImages = 5, kSide = 10;

/// The base intensity of pixel (x, y) of image k of class c: the images
/// differ everywhere.
int base(int c, int k, int x, int y) {
  return (37 * c + 11 * k + 7 * x + 3 * y) % 256;
}

/// Writes image k of class c to `path`, in class c's colour type: gray,
/// 16-bit gray, RGB, RGBA, palette, gray + alpha; returns its luminance.
std::vector<double> writeClassImage(const std::string &path, int c, int k) {
  static const std::vector<png_color> colors = palette();
  const int types[] = {PNG_COLOR_TYPE_GRAY,    PNG_COLOR_TYPE_GRAY,
                       PNG_COLOR_TYPE_RGB,     PNG_COLOR_TYPE_RGB_ALPHA,
                       PNG_COLOR_TYPE_PALETTE, PNG_COLOR_TYPE_GRAY_ALPHA};
  std::vector<std::vector<png_byte>> rows(kSide);
  std::vector<double> expected;
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x) {
      int g = base(c, k, x, y);
      auto &row = rows[y];
      switch (c) {
      case 1: { // 16 bits, big-endian, not a multiple of 257
        int value = g * 257 + (x % 3 == 0 && g < 255 ? 5 : 0);
        row.push_back(static_cast<png_byte>(value >> 8));
        row.push_back(static_cast<png_byte>(value & 0xFF));
        expected.push_back(value / 65535.0);
        break;
      }
      case 2:
      case 3: {
        int r = g, green = (g * 3) % 256, b = 255 - g;
        row.insert(row.end(),
                   {static_cast<png_byte>(r), static_cast<png_byte>(green),
                    static_cast<png_byte>(b)});
        if (c == 3)
          row.push_back(static_cast<png_byte>(x * 25)); // alpha, ignored
        expected.push_back(luminance(r, green, b));
        break;
      }
      case 4:
        row.push_back(static_cast<png_byte>(g));
        expected.push_back(
            luminance(colors[g].red, colors[g].green, colors[g].blue));
        break;
      default: // 0: gray, 5: gray + alpha
        row.push_back(static_cast<png_byte>(g));
        if (c == 5)
          row.push_back(static_cast<png_byte>(255 - y * 20));
        expected.push_back(g / 255.0);
        break;
      }
    }
  EXPECT_TRUE(writePng(path, kSide, kSide, types[c], c == 1 ? 16 : 8, rows,
                       c == 4 ? colors : std::vector<png_color>{}))
      << path;
  return expected;
}

/// The mean of each 2x2 block of a kSide x kSide image.
std::vector<double> halve(const std::vector<double> &image) {
  std::vector<double> out;
  for (int y = 0; y < kSide; y += 2)
    for (int x = 0; x < kSide; x += 2)
      out.push_back((image[y * kSide + x] + image[y * kSide + x + 1] +
                     image[(y + 1) * kSide + x] +
                     image[(y + 1) * kSide + x + 1]) /
                    4);
  return out;
}

TEST(Png, DecodesEveryColourTypeToLuminance) {
  ScratchDirectory dir;
  for (int c = 0; c < kClasses; ++c) {
    std::string path = dir.path("image" + std::to_string(c) + ".png");
    std::vector<double> expected = writeClassImage(path, c, 3);
    GrayImage image;
    ASSERT_EQ(decodePng(path, image), "") << "class " << c;
    ASSERT_EQ(image.width, kSide);
    ASSERT_EQ(image.height, kSide);
    for (size_t i = 0; i < expected.size(); ++i)
      ASSERT_NEAR(image.pixels[i], expected[i], 1e-12)
          << "class " << c << " pixel " << i;
  }
}

TEST(Png, DecodesLowBitDepthsSixteenBitColourAndInterlacing) {
  ScratchDirectory dir;
  // 1-bit gray, 3 x 2: samples packed from the high bit; 1 is white.
  std::string gray1 = dir.path("gray1.png");
  ASSERT_TRUE(writePng(gray1, 3, 2, PNG_COLOR_TYPE_GRAY, 1,
                       {{0b10100000}, {0b01000000}}));
  GrayImage image;
  ASSERT_EQ(decodePng(gray1, image), "");
  EXPECT_EQ(image.pixels, (std::vector<double>{1, 0, 1, 0, 1, 0}));

  // 4-bit palette, 2 x 1: indices 2 and 1.
  std::string palette4 = dir.path("palette4.png");
  ASSERT_TRUE(writePng(palette4, 2, 1, PNG_COLOR_TYPE_PALETTE, 4, {{0x21}},
                       {{0, 0, 0}, {255, 0, 0}, {0, 0, 255}}));
  ASSERT_EQ(decodePng(palette4, image), "");
  ASSERT_EQ(image.pixels.size(), 2u);
  EXPECT_NEAR(image.pixels[0], 0.114, 1e-12);
  EXPECT_NEAR(image.pixels[1], 0.299, 1e-12);

  // 16-bit RGB, 1 x 1.
  std::string rgb16 = dir.path("rgb16.png");
  ASSERT_TRUE(writePng(rgb16, 1, 1, PNG_COLOR_TYPE_RGB, 16,
                       {{0x12, 0x34, 0xAB, 0xCD, 0x00, 0x01}}));
  ASSERT_EQ(decodePng(rgb16, image), "");
  ASSERT_EQ(image.pixels.size(), 1u);
  EXPECT_NEAR(image.pixels[0], luminance(0x1234, 0xABCD, 1, 65535.0), 1e-12);

  // Interlaced (Adam7) 8-bit gray, 9 x 9.
  std::vector<std::vector<png_byte>> rows(9);
  std::vector<double> expected;
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 9; ++x) {
      rows[y].push_back(static_cast<png_byte>(x * 28 + y));
      expected.push_back((x * 28 + y) / 255.0);
    }
  std::string interlaced = dir.path("interlaced.png");
  ASSERT_TRUE(
      writePng(interlaced, 9, 9, PNG_COLOR_TYPE_GRAY, 8, rows, {}, true));
  ASSERT_EQ(decodePng(interlaced, image), "");
  EXPECT_EQ(image.pixels, expected);
}

TEST(Png, ResizesByArea) {
  // 3 -> 2 along x: output 0 covers input [0, 1.5), output 1 [1.5, 3).
  GrayImage row{3, 1, {0.3, 0.6, 0.9}};
  std::vector<double> narrow = resizeArea(row, 2, 1);
  ASSERT_EQ(narrow.size(), 2u);
  EXPECT_NEAR(narrow[0], (0.3 + 0.5 * 0.6) / 1.5, 1e-15);
  EXPECT_NEAR(narrow[1], (0.5 * 0.6 + 0.9) / 1.5, 1e-15);
  // 2 -> 4: each input pixel is repeated.
  GrayImage small{2, 2, {0.1, 0.2, 0.3, 0.4}};
  EXPECT_EQ(resizeArea(small, 4, 4),
            (std::vector<double>{0.1, 0.1, 0.2, 0.2, 0.1, 0.1, 0.2, 0.2, 0.3,
                                 0.3, 0.4, 0.4, 0.3, 0.3, 0.4, 0.4}));
  // 4 x 2 -> 2 x 2 (stretched): pairs along x averaged.
  GrayImage wide{4, 2, {0, 1, 2, 3, 4, 5, 6, 7}};
  EXPECT_EQ(resizeArea(wide, 2, 2), (std::vector<double>{0.5, 2.5, 4.5, 6.5}));
  // Same size: unchanged.
  EXPECT_EQ(resizeArea(wide, 4, 2), wide.pixels);
}

TEST(Png, RefusesFilesThatAreNotPngs) {
  ScratchDirectory dir;
  std::string text = dir.path("text.png");
  metart::test::writeFile(text, "hello, world");
  GrayImage image;
  EXPECT_EQ(decodePng(text, image), "not a PNG file (no PNG signature)");
  EXPECT_EQ(decodePng(dir.path("missing.png"), image),
            "No such file or directory");
  std::string good = dir.path("good.png");
  writeClassImage(good, 2, 0);
  std::string bytes = metart::test::readFile(good);
  std::string cut = dir.path("cut.png");
  metart::test::writeFile(cut, bytes.substr(0, bytes.size() / 2));
  EXPECT_NE(decodePng(cut, image), "");
}

metart_image_folder_config folderConfig(const std::string &path,
                                        int64_t imageSize, int64_t ways,
                                        int64_t shots, int64_t query,
                                        int32_t dtype = METART_F32) {
  return {path.c_str(), imageSize, ways, shots, query, dtype};
}

/// The message and status of creating a distribution from `config`.
std::pair<metart_status, std::string>
createError(const metart_image_folder_config &config) {
  metart_tasks *tasks = reinterpret_cast<metart_tasks *>(1);
  metart_status status = metart_tasks_create_image_folder(&config, 0, &tasks);
  EXPECT_EQ(tasks, nullptr);
  metart_tasks_destroy(tasks);
  return {status, metart_tasks_last_error(nullptr)};
}

/// A folder of six classes of five images (each class in its own colour
/// type), a text file in one class and a hidden folder, both skipped.
class ImageFolder : public ::testing::Test {
protected:
  void SetUp() override {
    std::filesystem::create_directories(root);
    std::filesystem::create_directories(root + "/.hidden");
    metart::test::writeFile(root + "/README", "not a class");
    for (int c = 0; c < kClasses; ++c) {
      std::string folder = root + "/class" + std::to_string(c);
      std::filesystem::create_directories(folder);
      for (int k = 0; k < kImages; ++k)
        images.push_back(writeClassImage(folder + "/" + std::to_string(k) +
                                             (k == 2 ? ".PNG" : ".png"),
                                         c, k));
    }
    metart::test::writeFile(root + "/class3/notes.txt", "skipped");
  }

  /// The image (class * kImages + k) of `candidates` that `pixels`
  /// matches within `tolerance`, or -1.
  static int find(const std::vector<std::vector<double>> &candidates,
                  const double *pixels, double tolerance) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      bool same = true;
      for (size_t p = 0; p < candidates[i].size() && same; ++p)
        same = std::fabs(candidates[i][p] - pixels[p]) <= tolerance;
      if (same)
        return static_cast<int>(i);
    }
    return -1;
  }

  /// Checks that every label of every task of `support`/`query` (drawn as
  /// f64 or f32 widened) holds the five images of one class, each once,
  /// with two support and three query images.
  void checkEpisodes(const std::vector<double> &supportX,
                     const std::vector<int64_t> &supportY,
                     const std::vector<double> &queryX,
                     const std::vector<int64_t> &queryY, int64_t tasks,
                     const std::vector<std::vector<double>> &candidates,
                     int64_t pixels, double tolerance) {
    const int64_t ways = 3, shots = 2, query = 3;
    for (int64_t t = 0; t < tasks; ++t) {
      std::set<int> classes;
      for (int64_t label = 0; label < ways; ++label) {
        std::set<int> found;
        for (int64_t s = 0; s < shots; ++s) {
          int64_t j = t * ways * shots + label * shots + s;
          EXPECT_EQ(supportY[j], label);
          found.insert(find(candidates, &supportX[j * pixels], tolerance));
        }
        for (int64_t q = 0; q < query; ++q) {
          int64_t j = t * ways * query + label * query + q;
          EXPECT_EQ(queryY[j], label);
          found.insert(find(candidates, &queryX[j * pixels], tolerance));
        }
        ASSERT_EQ(found.size(), 5u) << "task " << t << " label " << label;
        int c = *found.begin() / kImages;
        EXPECT_EQ(*found.begin(), c * kImages);
        EXPECT_EQ(*found.rbegin(), c * kImages + kImages - 1)
            << "task " << t << " label " << label << " mixes classes";
        classes.insert(c);
      }
      EXPECT_EQ(classes.size(), static_cast<size_t>(ways));
    }
  }

  ScratchDirectory dir;
  std::string root = dir.path("folder");
  std::vector<std::vector<double>> images;
};

TEST_F(ImageFolder, EpisodesHoldTheImagesOfOneClassPerLabel) {
  auto config = folderConfig(root, kSide, 3, 2, 3, METART_F64);
  metart_tasks *tasks = nullptr;
  ASSERT_EQ(metart_tasks_create_image_folder(&config, 5, &tasks), METART_OK)
      << metart_tasks_last_error(nullptr);
  int32_t dtype = -1, rank = -1;
  const int64_t *shape = nullptr;
  ASSERT_EQ(metart_tasks_sample_type(tasks, 0, &dtype, &rank, &shape),
            METART_OK);
  EXPECT_EQ(dtype, METART_F64);
  ASSERT_EQ(rank, 3);
  EXPECT_EQ(std::vector<int64_t>(shape, shape + 3),
            (std::vector<int64_t>{1, kSide, kSide}));
  int64_t support = 0, query = 0;
  metart_tasks_sizes(tasks, &support, &query);
  EXPECT_EQ(support, 6);
  EXPECT_EQ(query, 9);
  for (metart_split split : {METART_SPLIT_TRAIN, METART_SPLIT_EVAL}) {
    auto d = drawTasks<double, int64_t>(tasks, split, 2, 0, 12);
    checkEpisodes(d.supportX, d.supportY, d.queryX, d.queryY, 12, images,
                  kSide * kSide, 1e-12);
  }
  metart_tasks_destroy(tasks);
}

TEST_F(ImageFolder, ImagesAreResizedToImageSize) {
  auto config = folderConfig(root, kSide / 2, 3, 2, 3);
  metart_tasks *tasks = nullptr;
  ASSERT_EQ(metart_tasks_create_image_folder(&config, 5, &tasks), METART_OK)
      << metart_tasks_last_error(nullptr);
  auto d = drawTasks<float, int64_t>(tasks, METART_SPLIT_TRAIN, 0, 0, 6);
  std::vector<std::vector<double>> halves;
  for (const auto &image : images)
    halves.push_back(halve(image));
  auto widen = [](const std::vector<float> &v) {
    return std::vector<double>(v.begin(), v.end());
  };
  checkEpisodes(widen(d.supportX), d.supportY, widen(d.queryX), d.queryY, 6,
                halves, 25, 1e-6);
  metart_tasks_destroy(tasks);
}

/// Tasks [first, first + count) of draw 3 of `split`, as f32.
metart::test::TaskDraw<float, int64_t>
draw(metart_tasks *tasks, metart_split split, int64_t first, int64_t count) {
  return drawTasks<float, int64_t>(tasks, split, 3, first, count);
}

TEST_F(ImageFolder, ADrawIsTheConcatenationOfItsSlices) {
  auto config = folderConfig(root, 7, 2, 1, 2);
  metart_tasks *a = nullptr, *b = nullptr;
  ASSERT_EQ(metart_tasks_create_image_folder(&config, 9, &a), METART_OK);
  ASSERT_EQ(metart_tasks_create_image_folder(&config, 9, &b), METART_OK);
  for (metart_split split : {METART_SPLIT_TRAIN, METART_SPLIT_EVAL}) {
    auto whole = draw(a, split, 0, 4);
    EXPECT_TRUE(whole == draw(a, split, 0, 2) + draw(a, split, 2, 2));
    EXPECT_TRUE(whole == draw(b, split, 0, 4));
  }
  EXPECT_FALSE(draw(a, METART_SPLIT_TRAIN, 0, 4) ==
               draw(a, METART_SPLIT_EVAL, 0, 4))
      << "the splits draw from the same classes with different streams";
  metart_tasks_destroy(a);
  metart_tasks_destroy(b);
}

TEST_F(ImageFolder, BadFoldersAreRefusedWithTheirNames) {
  std::string prefix = "metart_tasks_create_image_folder: ";
  std::string missing = dir.path("missing");
  auto [status, message] = createError(folderConfig(missing, 5, 2, 1, 1));
  EXPECT_EQ(status, METART_ERROR_IO);
  EXPECT_EQ(message, prefix + "cannot read directory '" + missing +
                         "': No such file or directory");

  std::string empty = dir.path("empty");
  std::filesystem::create_directories(empty + "/.git");
  std::tie(status, message) = createError(folderConfig(empty, 5, 2, 1, 1));
  EXPECT_EQ(status, METART_ERROR_IO);
  EXPECT_EQ(message, prefix + "'" + empty +
                         "' has no class folders (it needs one subdirectory "
                         "of PNG images per class)");

  std::tie(status, message) = createError(folderConfig(root, 5, 7, 1, 1));
  EXPECT_EQ(status, METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(message,
            prefix + "'" + root + "' has 6 class folders, fewer than ways (7)");

  std::tie(status, message) = createError(folderConfig(root, 5, 2, 3, 3));
  EXPECT_EQ(status, METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(message, prefix + "class folder '" + root +
                         "/class0' has 5 PNG images, fewer than shots + "
                         "query (6)");

  std::string corrupt = root + "/class4/9.png";
  metart::test::writeFile(corrupt, "\x89PNG\r\n\x1a\n but nothing after");
  std::tie(status, message) = createError(folderConfig(root, 5, 2, 1, 1));
  EXPECT_EQ(status, METART_ERROR_IO);
  EXPECT_EQ(message.rfind(prefix + "cannot decode '" + corrupt + "': ", 0), 0u)
      << message;
  metart::test::writeFile(corrupt, "GIF89a");
  std::tie(status, message) = createError(folderConfig(root, 5, 2, 1, 1));
  EXPECT_EQ(message, prefix + "cannot decode '" + corrupt +
                         "': not a PNG file (no PNG signature)");
}

TEST_F(ImageFolder, CreateChecksTheConfiguration) {
  std::string prefix = "metart_tasks_create_image_folder: ";
  auto expectError = [&](const metart_image_folder_config &config,
                         const std::string &text) {
    auto [status, message] = createError(config);
    EXPECT_EQ(status, METART_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(message, prefix + text);
  };
  expectError(folderConfig(root, 0, 2, 1, 1),
              "image_size (0) must be between 1 and 4096");
  expectError(folderConfig(root, 5, 0, 1, 1), "ways (0) must be at least 1");
  expectError(folderConfig(root, 5, 2, 1, -1),
              "shots (1) must be between 1 and 16777216, query (-1) between "
              "0 and 16777216");
  expectError(folderConfig(root, 5, 2, 1, 1, METART_I32),
              "dtype 2 is not METART_F32 or METART_F64");
  expectError(folderConfig("", 5, 2, 1, 1), "path is null or empty");
}

} // namespace
