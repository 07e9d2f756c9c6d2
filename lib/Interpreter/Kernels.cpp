//===- Kernels.cpp - the values an evaluation has computed ----------------===//

#include "Kernels.h"

#include <cassert>

using namespace mlir;

namespace metac::interp {
namespace detail {

const Tensor &Frame::get(Value value) const {
  auto it = tensors.find(value);
  assert(it != tensors.end() && "value used before it was computed");
  return it->second;
}

void Frame::bind(Value value, Tensor tensor) {
  tensors[value] = std::move(tensor);
}

} // namespace detail

} // namespace metac::interp
