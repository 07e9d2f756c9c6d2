//===- Precision.h - bfloat16 and half as storage types ---------*- C++ -*-===//
//
// METART_BF16 and METART_F16 tensors store 16-bit floats; kernels compute
// on them in f32 (ops/Widen.h): each operand widened exactly, each result
// rounded to the nearest representable value, ties to even. These are the
// scalar conversions, written out so that they do not depend on the
// compiler's _Float16 or __bf16 support (or on F16C).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_PRECISION_H
#define METART_SRC_PRECISION_H

#include <cstdint>
#include <cstring>

namespace metart {

inline uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

inline float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

/// bfloat16: the upper half of an f32.
inline float bf16ToFloat(uint16_t value) {
  return floatOf(uint32_t(value) << 16);
}

/// Rounds to the nearest bfloat16, ties to even; NaN stays NaN (quiet).
inline uint16_t floatToBf16(float value) {
  uint32_t bits = bitsOf(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x0040u);
  uint32_t lsb = (bits >> 16) & 1u;
  return uint16_t((bits + 0x7fffu + lsb) >> 16);
}

/// IEEE 754 binary16 to f32 (exact: subnormals, infinities, NaN).
inline float f16ToFloat(uint16_t value) {
  uint32_t sign = uint32_t(value & 0x8000u) << 16;
  uint32_t exponent = (value >> 10) & 0x1fu;
  uint32_t mantissa = value & 0x3ffu;
  if (exponent == 0x1f) // infinity or NaN
    return floatOf(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0)
      return floatOf(sign);
    // Subnormal: mantissa x 2^-24.
    float magnitude = float(mantissa) * floatOf(0x33800000u); // 2^-24
    return sign ? -magnitude : magnitude;
  }
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// Rounds to the nearest binary16, ties to even: above 65504 (from 65520
/// on) to infinity, below 2^-24 / 2 to zero; NaN stays NaN.
inline uint16_t floatToF16(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN
    return uint16_t(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  if (magnitude >= 0x477ff000u) // >= 65520: infinity
    return uint16_t(sign | 0x7c00u);
  if (magnitude < 0x38800000u) { // below 2^-14: subnormal or zero
    // The value in units of 2^-24, rounded to nearest even.
    float scaled = floatOf(magnitude) * floatOf(0x4b800000u); // 2^24
    uint32_t units = uint32_t(scaled);
    float rest = scaled - float(units);
    if (rest > 0.5f || (rest == 0.5f && (units & 1u)))
      ++units;
    return uint16_t(sign | units);
  }
  // Normal: rebias the exponent, round the 13 dropped bits.
  uint32_t lsb = (magnitude >> 13) & 1u;
  uint32_t rounded = magnitude + 0xfffu + lsb;
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

} // namespace metart

#endif // METART_SRC_PRECISION_H
