//===- SafetensorsDtype.cpp - element types of safetensors files ----------===//
//
// The element types the format names (those of the reference
// implementation, in its order), the four metart has, and their sizes.
//
//===----------------------------------------------------------------------===//

#include "io/Safetensors.h"

using namespace metart::io;

/// Every type of the format, in the order of the reference implementation's
/// `Dtype` enum (which orders the tensors of the files it writes). Files with
/// a type metart lacks are refused as unsupported, not as corrupt.
static constexpr SafetensorsDtype kDtypes[] = {
    {"BOOL", -1},        {"F4", -1},          {"F6_E2M3", -1},
    {"F6_E3M2", -1},     {"U8", -1},          {"I8", -1},
    {"F8_E5M2", -1},     {"F8_E4M3", -1},     {"F8_E8M0", -1},
    {"I16", -1},         {"U16", -1},         {"F16", -1},
    {"BF16", -1},        {"I32", METART_I32}, {"U32", -1},
    {"F32", METART_F32}, {"C64", -1},         {"F64", METART_F64},
    {"I64", METART_I64}, {"U64", -1},
};

const SafetensorsDtype *
metart::io::findSafetensorsDtype(std::string_view name) {
  for (const SafetensorsDtype &dtype : kDtypes)
    if (name == dtype.name)
      return &dtype;
  return nullptr;
}

/// The format's type that metart type `dtype` is, or null.
static const SafetensorsDtype *findMetartDtype(int32_t dtype) {
  for (const SafetensorsDtype &known : kDtypes)
    if (known.metartDtype >= 0 && known.metartDtype == dtype)
      return &known;
  return nullptr;
}

const char *metart::io::safetensorsDtypeName(int32_t dtype) {
  const SafetensorsDtype *known = findMetartDtype(dtype);
  return known ? known->name : nullptr;
}

int metart::io::safetensorsDtypeOrder(int32_t dtype) {
  const SafetensorsDtype *known = findMetartDtype(dtype);
  return known ? static_cast<int>(known - kDtypes) : -1;
}

size_t metart::io::dtypeBytes(int32_t dtype) {
  switch (dtype) {
  case METART_F32:
  case METART_I32:
    return 4;
  case METART_F64:
  case METART_I64:
    return 8;
  default:
    return 0;
  }
}
