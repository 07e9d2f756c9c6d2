//===- Png.cpp - PNG images as one luminance channel ----------------------===//
//
// libpng reports errors by longjmp to the setjmp of its caller: the one
// function that calls setjmp (readRows) keeps no C++ object of its own, so
// jumping out of libpng skips no destructor; its buffers belong to the
// caller.
//
//===----------------------------------------------------------------------===//

#include "data/Png.h"

#include <png.h>

#include <algorithm>
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <utility>

using namespace metart::data;

namespace {

/// The largest width or height decoded.
constexpr png_uint_32 kMaxSide = 16384;

/// The message of libpng's last error.
struct PngError {
  char message[256];
};

void onError(png_structp png, png_const_charp message) {
  auto *error = static_cast<PngError *>(png_get_error_ptr(png));
  std::snprintf(error->message, sizeof(error->message), "%s", message);
  png_longjmp(png, 1);
}

void onWarning(png_structp, png_const_charp) {}

/// The decoded samples: `channels` per pixel (gray or RGB, alpha
/// stripped) of `depth` bits (8 or 16, big-endian).
struct RawImage {
  png_uint_32 width = 0, height = 0;
  int channels = 0, depth = 0;
  std::vector<png_byte> bytes;
  std::vector<png_bytep> rows;
};

/// Reads the image after its signature into `raw`; false after a libpng
/// error (whose message is in the error pointer's PngError).
bool readRows(png_structp png, png_infop info, FILE *file, RawImage &raw) {
  if (setjmp(png_jmpbuf(png)))
    return false;
  png_init_io(png, file);
  png_set_sig_bytes(png, 8);
  png_set_user_limits(png, kMaxSide, kMaxSide);
  png_read_info(png, info);
  int colorType = png_get_color_type(png, info);
  if (colorType == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb(png);
  if (colorType == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (colorType & PNG_COLOR_MASK_ALPHA)
    png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  raw.width = png_get_image_width(png, info);
  raw.height = png_get_image_height(png, info);
  raw.channels = png_get_channels(png, info);
  raw.depth = png_get_bit_depth(png, info);
  size_t rowBytes = png_get_rowbytes(png, info);
  raw.bytes.resize(rowBytes * raw.height);
  raw.rows.resize(raw.height);
  for (png_uint_32 y = 0; y < raw.height; ++y)
    raw.rows[y] = raw.bytes.data() + y * rowBytes;
  png_read_image(png, raw.rows.data());
  png_read_end(png, nullptr);
  return true;
}

/// Closes the file and frees libpng's structures, whatever happens.
struct PngReader {
  FILE *file = nullptr;
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngReader() {
    if (png)
      png_destroy_read_struct(&png, info ? &info : nullptr, nullptr);
    if (file)
      std::fclose(file);
  }
};

} // namespace

std::string metart::data::decodePng(const std::string &path, GrayImage &out) {
  PngReader reader;
  reader.file = std::fopen(path.c_str(), "rb");
  if (!reader.file)
    return std::strerror(errno);
  png_byte signature[8];
  if (std::fread(signature, 1, 8, reader.file) != 8 ||
      png_sig_cmp(signature, 0, 8))
    return "not a PNG file (no PNG signature)";
  PngError error{};
  reader.png =
      png_create_read_struct(PNG_LIBPNG_VER_STRING, &error, onError, onWarning);
  if (reader.png)
    reader.info = png_create_info_struct(reader.png);
  if (!reader.png || !reader.info)
    return "out of memory";
  RawImage raw;
  if (!readRows(reader.png, reader.info, reader.file, raw))
    return error.message;
  if (raw.depth != 8 && raw.depth != 16)
    return "unexpected bit depth " + std::to_string(raw.depth);

  out.width = raw.width;
  out.height = raw.height;
  out.pixels.resize(static_cast<size_t>(out.width) * out.height);
  const int bytesPerSample = raw.depth / 8;
  const double scale = raw.depth == 8 ? 255.0 : 65535.0;
  auto sample = [&](const png_byte *p) {
    return (bytesPerSample == 1 ? p[0] : (p[0] << 8 | p[1])) / scale;
  };
  for (png_uint_32 y = 0; y < raw.height; ++y)
    for (png_uint_32 x = 0; x < raw.width; ++x) {
      const png_byte *p =
          raw.rows[y] + static_cast<size_t>(x) * raw.channels * bytesPerSample;
      double value = raw.channels >= 3
                         ? 0.299 * sample(p) +
                               0.587 * sample(p + bytesPerSample) +
                               0.114 * sample(p + 2 * bytesPerSample)
                         : sample(p);
      out.pixels[static_cast<size_t>(y) * out.width + x] = value;
    }
  return {};
}

/// The input pixels covering each of `outSize` output pixels along an axis
/// of `inSize`, with their weights (summing to 1). In units of
/// 1 / (inSize * outSize) of the axis, input pixel i covers
/// [i * outSize, (i + 1) * outSize) and output pixel o [o * inSize,
/// (o + 1) * inSize): the overlaps are exact integers.
static std::vector<std::vector<std::pair<int64_t, double>>>
areaWeights(int64_t inSize, int64_t outSize) {
  std::vector<std::vector<std::pair<int64_t, double>>> weights(outSize);
  for (int64_t o = 0; o < outSize; ++o) {
    int64_t begin = o * inSize, end = (o + 1) * inSize;
    for (int64_t i = begin / outSize; i < inSize && i * outSize < end; ++i) {
      int64_t overlap =
          std::min(end, (i + 1) * outSize) - std::max(begin, i * outSize);
      if (overlap > 0)
        weights[o].push_back({i, static_cast<double>(overlap) / inSize});
    }
  }
  return weights;
}

std::vector<double> metart::data::resizeArea(const GrayImage &image,
                                             int64_t width, int64_t height) {
  auto columns = areaWeights(image.width, width);
  auto rows = areaWeights(image.height, height);
  // Rows first: each input row resized to `width`, then the columns.
  std::vector<double> narrow(static_cast<size_t>(image.height) * width, 0.0);
  for (int64_t y = 0; y < image.height; ++y)
    for (int64_t x = 0; x < width; ++x) {
      double sum = 0;
      for (auto [i, w] : columns[x])
        sum += w * image.pixels[y * image.width + i];
      narrow[y * width + x] = sum;
    }
  std::vector<double> out(static_cast<size_t>(width) * height, 0.0);
  for (int64_t y = 0; y < height; ++y)
    for (auto [i, w] : rows[y])
      for (int64_t x = 0; x < width; ++x)
        out[y * width + x] += w * narrow[i * width + x];
  return out;
}
