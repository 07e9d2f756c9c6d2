//===- Png.h - PNG images as one luminance channel --------------*- C++ -*-===//
//
// Decoding (libpng) of every PNG colour type and bit depth into luminance
// values in [0, 1], and area resizing, for image folders.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_DATA_PNG_H
#define METART_SRC_DATA_PNG_H

#include <cstdint>
#include <string>
#include <vector>

namespace metart::data {

/// A one-channel image, row-major, values in [0, 1].
struct GrayImage {
  int64_t width = 0;
  int64_t height = 0;
  std::vector<double> pixels;
};

/// Decodes the PNG file at `path` into `out`: 1, 2 and 4-bit gray are
/// scaled to 8 bits (as libpng expands them), palettes looked up, an 8-bit
/// sample v becomes v / 255 and a 16-bit one v / 65535, colour becomes
/// 0.299 R + 0.587 G + 0.114 B, and alpha (an alpha channel or tRNS) is
/// ignored. No gamma correction. Returns "" or what is wrong (libpng's
/// message, or the system's for a file that cannot be opened). Images of
/// more than 16384 pixels on a side are refused.
std::string decodePng(const std::string &path, GrayImage &out);

/// `image` resized to `width` x `height` by area interpolation: each output
/// pixel is the mean of the input over its footprint, an input pixel cut
/// by the footprint's edge weighted by the part of it inside.
std::vector<double> resizeArea(const GrayImage &image, int64_t width,
                               int64_t height);

} // namespace metart::data

#endif // METART_SRC_DATA_PNG_H
