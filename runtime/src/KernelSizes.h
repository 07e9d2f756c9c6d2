//===- KernelSizes.h - what a backend kernel is told ------------*- C++ -*-===//
//
// The dispatch layer checks a call's operands and reduces them to the sizes
// below, so that a backend computes without re-deriving geometry: weights
// batched over a prefix of the input's leading dimensions become "slices"
// that a run of consecutive rows (images, positions) shares, and ops over
// arbitrary dimensions (transpose, broadcast, reductions, batch norm)
// become strided iteration spaces.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_KERNELSIZES_H
#define METART_SRC_KERNELSIZES_H

#include "Tensor.h"

#include <cstdint>

namespace metart {

/// `nn.linear`: rows `[rows, in]` of the input, weight slices
/// `[slices, out, in]`; rows `[s * rowsPerSlice, (s + 1) * rowsPerSlice)`
/// use slice `s`.
struct LinearSizes {
  int64_t slices, rowsPerSlice, in, out;
};

/// `nn.matmul`: `batch` products of `[m, k]` by `[k, n]`, each operand
/// stored transposed when its flag is set.
struct MatmulSizes {
  int64_t batch, m, n, k;
  bool transposeA, transposeB;
};

/// Where a block's positions sit in the whole sequence: one or two runs of
/// consecutive positions, the second after the first (a ring's zigzag
/// layout holds a run from each end), so that they increase with the index.
struct PositionRuns {
  /// The first position of each run, and the index where the second begins
  /// (INT64_MAX: one run).
  int64_t start[2] = {0, 0};
  int64_t split = INT64_MAX;
  int64_t at(int64_t i) const {
    return i < split ? start[0] + i : start[1] + (i - split);
  }
};

/// `nn.attention`: `batch` attentions of `length` queries over `keys` keys
/// of `width` features with values of `values` features. Causal attention
/// masks by the positions of `queryPositions` and `keyPositions` (by
/// default the indices themselves).
struct AttentionSizes {
  int64_t batch, length, keys, width, values;
  double scale;
  bool causal;
  PositionRuns queryPositions = {}, keyPositions = {};
};

/// The data of attention's second derivative: the operands of its backward
/// (q, k, v, dy) and the cotangents of that backward's results (gq, gk,
/// gv, any of them null) ...
struct AttentionOperands {
  const void *q, *k, *v, *dy, *gq, *gk, *gv;
};
/// ... and the cotangents it computes (those not null).
struct AttentionCotangents {
  void *q, *k, *v, *dy;
};

/// `nn.conv2d` and its derivatives: `images` inputs `[channels, height,
/// width]`, `slices` weight slices `[outChannels, channels, kernelH,
/// kernelW]` each shared by `imagesPerSlice` consecutive images, outputs
/// `[outChannels, outHeight, outWidth]`.
struct ConvSizes {
  int64_t images, slices, imagesPerSlice;
  int64_t channels, height, width;
  int64_t outChannels, kernelH, kernelW, outHeight, outWidth;
  int64_t strideH, strideW, padH, padW;
};

/// 2-D pooling: `planes` inputs `[height, width]` to outputs `[outHeight,
/// outWidth]`.
struct PoolSizes {
  int64_t planes, height, width, outHeight, outWidth;
  int64_t kernelH, kernelW, strideH, strideW, padH, padW;
};

/// An iteration space of `rank` dimensions and, for each of `N` operands,
/// the element stride of each dimension (0 where the operand repeats).
template <int N> struct StridedSpace {
  int rank = 0;
  int64_t size[kMaxRank] = {};
  int64_t stride[N][kMaxRank] = {};
};

/// `nn.batch_norm`: the input's shape; operand 0 is the input (and result),
/// operand 1 the statistics (`statistics` of them, 0 stride on reduced
/// dimensions), operand 2 the weight and bias. `count` elements share one
/// statistic.
struct BatchNormSizes {
  StridedSpace<3> space;
  int64_t statistics, count;
};

/// `nn.layer_norm`: `rows` rows of `width`; rows `[s * rowsPerSlice, (s + 1)
/// * rowsPerSlice)` use weight and bias slice `s`.
struct LayerNormSizes {
  int64_t rows, rowsPerSlice, width;
};

/// Softmax along one axis of size `axis`, between `outer` and `inner`
/// elements.
struct AxisSizes {
  int64_t outer, axis, inner;
};

/// Table lookups of `positions` ids in `slices` table slices `[rows,
/// width]`, each shared by `positionsPerSlice` consecutive positions.
struct LookupSizes {
  int64_t positions, slices, positionsPerSlice, rows, width;
};

/// Top-k routing (nn.moe_dispatch) of `groups` groups of `tokens` tokens
/// over `experts` experts with `capacity` slots each.
struct RoutingSizes {
  int64_t groups, tokens, experts, capacity;
};

/// A loss over `entries` batch entries of `samples` consecutive samples,
/// each of `classes` logits (cross-entropy) or one element (mse).
struct LossSizes {
  int64_t entries, samples, classes;
};

/// Hyperparameters of `metart_sgd_update`. `gate` (null: always apply)
/// is metart_update_guard's [apply, scale] in the backend's memory.
struct SgdOptions {
  double lr, momentum, weightDecay;
  const double *gate = nullptr;
};

/// Hyperparameters of `metart_adam_update`. The step number and the gate
/// live in the backend's memory (so that a recorded step replays with the
/// current count and verdict).
struct AdamOptions {
  const int64_t *step;
  double lr, beta1, beta2, eps, weightDecay;
  bool decoupled;
  const double *gate = nullptr;
};

/// The gradients of `metart_update_guard`: `count` tensors of one float
/// type, `data[i]` with `sizes[i]` elements.
struct GuardInputs {
  int64_t count;
  const void *const *data;
  const int64_t *sizes;
  metart_dtype dtype;
  const void *loss;
  metart_dtype lossType;
  double clipNorm;
};

} // namespace metart

#endif // METART_SRC_KERNELSIZES_H
