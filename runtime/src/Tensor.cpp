//===- Tensor.cpp - shapes, element types and statuses of operands -------===//

#include "Tensor.h"

#include <limits>

namespace metart {

ShapeRef ShapeRef::takeFront(size_t n) const {
  return ShapeRef(data, n < length ? n : length);
}

ShapeRef ShapeRef::dropFront(size_t n) const {
  return n < length ? ShapeRef(data + n, length - n) : ShapeRef();
}

ShapeRef ShapeRef::dropBack(size_t n) const {
  return ShapeRef(data, n < length ? length - n : 0);
}

int64_t ShapeRef::product() const {
  int64_t n = 1;
  for (int64_t d : *this)
    n *= d;
  return n;
}

bool ShapeRef::contains(int64_t dim) const {
  for (int64_t d : *this)
    if (d == dim)
      return true;
  return false;
}

bool ShapeRef::operator==(ShapeRef other) const {
  if (length != other.length)
    return false;
  for (size_t i = 0; i < length; ++i)
    if (data[i] != other.data[i])
      return false;
  return true;
}

void rowMajorStrides(ShapeRef shape, int64_t *strides) {
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
}

std::ostream &operator<<(std::ostream &os, ShapeRef shape) {
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? ", " : "") << shape[i];
  return os << ']';
}

std::string dtypeName(int32_t dtype) {
  switch (dtype) {
  case METART_F32:
    return "f32";
  case METART_F64:
    return "f64";
  case METART_I32:
    return "i32";
  case METART_I64:
    return "i64";
  case METART_BF16:
    return "bf16";
  case METART_F16:
    return "f16";
  default:
    return "dtype " + std::to_string(dtype);
  }
}

size_t dtypeSize(int32_t dtype) {
  switch (dtype) {
  case METART_F32:
  case METART_I32:
    return 4;
  case METART_F64:
  case METART_I64:
    return 8;
  case METART_BF16:
  case METART_F16:
    return 2;
  default:
    return 0;
  }
}

std::ostream &operator<<(std::ostream &os, Described d) {
  return os << shapeOf(d.tensor) << ' ' << dtypeName(d.tensor.dtype);
}

} // namespace metart
