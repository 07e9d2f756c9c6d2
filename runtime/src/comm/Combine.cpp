//===- Combine.cpp - adding and maximising buffers ------------------------===//

#include "Combine.h"
#include "../Precision.h"

using namespace metart;
using namespace metart::comm;

namespace {

template <typename T>
void combineAs(bool max, const void *in, void *inout, int64_t count) {
  const T *a = static_cast<const T *>(in);
  T *b = static_cast<T *>(inout);
  if (max) {
    // Written so that NaN propagates, as MPI_MAX does on floats.
    for (int64_t i = 0; i < count; ++i)
      b[i] = a[i] > b[i] || a[i] != a[i] ? a[i] : b[i];
  } else {
    for (int64_t i = 0; i < count; ++i)
      b[i] += a[i];
  }
}

template <float (*toFloat)(uint16_t), uint16_t (*fromFloat)(float)>
void combine16(bool max, const void *in, void *inout, int64_t count) {
  const auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int64_t i = 0; i < count; ++i) {
    float x = toFloat(a[i]), y = toFloat(b[i]);
    b[i] = fromFloat(max ? (x > y || x != x ? x : y) : x + y);
  }
}

} // namespace

void metart::comm::combine(metart_dtype dtype, Reduction reduction,
                           const void *in, void *inout, int64_t count) {
  bool max = reduction == Reduction::Max;
  switch (dtype) {
  case METART_F32:
    return combineAs<float>(max, in, inout, count);
  case METART_F64:
    return combineAs<double>(max, in, inout, count);
  case METART_I32:
    return combineAs<int32_t>(max, in, inout, count);
  case METART_BF16:
    return combine16<bf16ToFloat, floatToBf16>(max, in, inout, count);
  case METART_F16:
    return combine16<f16ToFloat, floatToF16>(max, in, inout, count);
  default:
    return combineAs<int64_t>(max, in, inout, count);
  }
}
