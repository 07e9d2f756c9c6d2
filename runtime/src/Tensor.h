//===- Tensor.h - operand checks of runtime calls ---------------*- C++ -*-===//
//
// What every entry point of the C API does before it dispatches to a
// backend: checks that its tensors are well formed and that their shapes
// and element types follow the rules of the op, and records a message that
// names the function and the shapes on the context when they do not.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_TENSOR_H
#define METART_SRC_TENSOR_H

#include "metart/metart.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

namespace metart {

/// The highest tensor rank the runtime takes.
inline constexpr int kMaxRank = METART_MAX_RANK;

/// A read-only view of a shape (or of any list of dimensions).
class ShapeRef {
public:
  ShapeRef() = default;
  ShapeRef(const int64_t *data, size_t size) : data(data), length(size) {}

  size_t size() const { return length; }
  bool empty() const { return length == 0; }
  int64_t operator[](size_t i) const { return data[i]; }
  int64_t back() const { return data[length - 1]; }
  const int64_t *begin() const { return data; }
  const int64_t *end() const { return data + length; }

  /// The first `n` dimensions (all of them when there are fewer).
  ShapeRef takeFront(size_t n) const;
  /// The dimensions after the first `n`.
  ShapeRef dropFront(size_t n) const;
  /// The dimensions before the last `n`.
  ShapeRef dropBack(size_t n) const;
  /// The product of the dimensions (1 when empty).
  int64_t product() const;
  /// Whether `dim` is one of the dimensions.
  bool contains(int64_t dim) const;

  bool operator==(ShapeRef other) const;
  bool operator!=(ShapeRef other) const { return !(*this == other); }

private:
  const int64_t *data = nullptr;
  size_t length = 0;
};

/// A shape that a check builds: at most kMaxRank + 1 dimensions (an
/// operand's shape and one more), further ones are dropped.
class SmallShape {
public:
  SmallShape() = default;
  explicit SmallShape(ShapeRef prefix) { append(prefix); }

  void push_back(int64_t dim) {
    if (count < kMaxRank + 1)
      dims[count++] = dim;
  }
  void append(ShapeRef more) {
    for (int64_t dim : more)
      push_back(dim);
  }
  operator ShapeRef() const { return ShapeRef(dims, count); }

private:
  int64_t dims[kMaxRank + 1] = {};
  size_t count = 0;
};

/// Writes the row-major element strides of `shape` to `strides`.
void rowMajorStrides(ShapeRef shape, int64_t *strides);

/// Prints `[d0, d1, ...]`, how shapes appear in every message.
std::ostream &operator<<(std::ostream &os, ShapeRef shape);

/// The shape of a (checked) tensor.
inline ShapeRef shapeOf(const metart_tensor &t) {
  return ShapeRef(t.shape, static_cast<size_t>(t.rank));
}

/// The number of elements of a (checked) tensor.
inline int64_t numElements(const metart_tensor &t) {
  return shapeOf(t).product();
}

/// The element type of a (checked) tensor.
inline metart_dtype dtypeOf(const metart_tensor &t) {
  return static_cast<metart_dtype>(t.dtype);
}

/// "f32", "f64", "i32", "i64", or "dtype N" for an unknown value.
std::string dtypeName(int32_t dtype);

/// The size in bytes of one element of `dtype` (0 for an unknown value).
size_t dtypeSize(int32_t dtype);

/// How a tensor appears in messages: `[2, 3] f32`.
struct Described {
  const metart_tensor &tensor;
};
inline Described describe(const metart_tensor &t) { return Described{t}; }
std::ostream &operator<<(std::ostream &os, Described d);

/// The failure a backend reports for something the checks could not see
/// (an id out of range, a size its library cannot take): a status and a
/// message, to which the dispatch layer adds the function's name.
struct KernelStatus {
  metart_status code = METART_OK;
  std::string message;

  static KernelStatus ok() { return {}; }
  bool failed() const { return code != METART_OK; }
};

} // namespace metart

#endif // METART_SRC_TENSOR_H
