//===- NoOneDnnProducts.cpp - products without oneDNN ---------------------===//
//
// Without oneDNN every product stays on OpenBLAS: `handles` says no.
//
//===----------------------------------------------------------------------===//

#include "OneDnnProducts.h"

namespace metart::cpu {

struct OneDnnProducts::State {};

OneDnnProducts::OneDnnProducts() = default;
OneDnnProducts::~OneDnnProducts() = default;

bool OneDnnProducts::handles(metart_dtype, const ProductSizes &) {
  return false;
}

std::string OneDnnProducts::implementation(const ProductSizes &) { return ""; }

KernelStatus OneDnnProducts::run(const ProductSizes &, Workspace &,
                                 const float *, const float *, const float *,
                                 float *) {
  return {METART_ERROR_UNSUPPORTED, "metart was built without oneDNN"};
}

} // namespace metart::cpu
