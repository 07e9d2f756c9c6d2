//===- DegenerateProducts.h - products of a unit dimension as maps -*- C++
//-*-===//

#ifndef METAC_LIB_CONVERSION_FUSION_DEGENERATEPRODUCTS_H
#define METAC_LIB_CONVERSION_FUSION_DEGENERATEPRODUCTS_H

namespace mlir {
class Block;
} // namespace mlir

namespace metac::fusion {

/// Rewrites the batched products of `block` with one term, row or column
/// (and the batched linear layers with one input or output feature) into
/// broadcasts, multiplies and sums: a kernel's body before it is generated.
void decomposeProductsWithUnitDimension(mlir::Block &block);

/// Rewrites the other batched linear layers with a bias of `block` into the
/// product and a map adding the bias, which joins the activation's group.
void splitBatchedBiases(mlir::Block &block);

} // namespace metac::fusion

#endif // METAC_LIB_CONVERSION_FUSION_DEGENERATEPRODUCTS_H
