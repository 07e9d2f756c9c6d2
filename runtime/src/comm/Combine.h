//===- Combine.h - adding and maximising buffers ----------------*- C++ -*-===//
//
// The element-wise reduction every host-memory collective applies (the
// MPI algorithms' and the TCP transport's), in one place so that they
// round alike.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_COMBINE_H
#define METART_SRC_COMM_COMBINE_H

#include "Communicator.h"

namespace metart::comm {

/// `inout[i] = inout[i] (+ or max) in[i]` for `count` elements of `dtype`
/// (16-bit floats added in f32 and rounded, as NCCL does; max propagates
/// NaN).
void combine(metart_dtype dtype, Reduction reduction, const void *in,
             void *inout, int64_t count);

} // namespace metart::comm

#endif // METART_SRC_COMM_COMBINE_H
