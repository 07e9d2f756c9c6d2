//===- DegenerateProducts.h - products of a unit dimension as maps -*- C++
//-*-===//

#ifndef METAC_LIB_CONVERSION_FUSION_DEGENERATEPRODUCTS_H
#define METAC_LIB_CONVERSION_FUSION_DEGENERATEPRODUCTS_H

namespace mlir {
class Block;
} // namespace mlir

namespace metac::fusion {

/// Rewrites the batched products of `block` with one row, one column or one
/// term (and the batched linear layers with one input or output feature)
/// into broadcasts, multiplies and sums, which then join fused groups; the
/// bias of the other batched linear layers becomes a map.
void decomposeDegenerateProducts(mlir::Block &block);

} // namespace metac::fusion

#endif // METAC_LIB_CONVERSION_FUSION_DEGENERATEPRODUCTS_H
