//===- Convert.cpp - conversions between float element types -------------===//

#include "CpuBackend.h"
#include "Parallel.h"

#include "../Precision.h"

using namespace metart;
using namespace metart::cpu;

namespace {

/// Element i of `x` (of `dtype`) as a float or double.
double load(metart_dtype dtype, const void *x, int64_t i) {
  switch (dtype) {
  case METART_F64:
    return static_cast<const double *>(x)[i];
  case METART_BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(x)[i]);
  case METART_F16:
    return f16ToFloat(static_cast<const uint16_t *>(x)[i]);
  default:
    return static_cast<const float *>(x)[i];
  }
}

void store(metart_dtype dtype, void *y, int64_t i, double value) {
  switch (dtype) {
  case METART_F64:
    static_cast<double *>(y)[i] = value;
    return;
  case METART_BF16:
    static_cast<uint16_t *>(y)[i] = floatToBf16(static_cast<float>(value));
    return;
  case METART_F16:
    static_cast<uint16_t *>(y)[i] = floatToF16(static_cast<float>(value));
    return;
  default:
    static_cast<float *>(y)[i] = static_cast<float>(value);
  }
}

bool isFloat(metart_dtype dtype) {
  return dtype == METART_F32 || dtype == METART_F64 || dtype == METART_BF16 ||
         dtype == METART_F16;
}

} // namespace

KernelStatus CpuBackend::convert(metart_dtype from, metart_dtype to,
                                 int64_t count, const void *x, void *y) {
  if (!isFloat(from) || !isFloat(to))
    return {METART_ERROR_INVALID_ARGUMENT,
            "convert takes float element types only"};
  // The common pairs get their own loops (the dtype switch per element
  // would cost more than the conversion).
  parallelFor(count, kElementGrain, [&](int64_t begin, int64_t end) {
    if (from == METART_F32 && to == METART_BF16) {
      auto *in = static_cast<const float *>(x);
      auto *out = static_cast<uint16_t *>(y);
      for (int64_t i = begin; i < end; ++i)
        out[i] = floatToBf16(in[i]);
    } else if (from == METART_BF16 && to == METART_F32) {
      auto *in = static_cast<const uint16_t *>(x);
      auto *out = static_cast<float *>(y);
      for (int64_t i = begin; i < end; ++i)
        out[i] = bf16ToFloat(in[i]);
    } else {
      for (int64_t i = begin; i < end; ++i)
        store(to, y, i, load(from, x, i));
    }
  });
  return KernelStatus::ok();
}
