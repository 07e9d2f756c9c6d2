//===- Compression.h - all-reduces with state across iterations -*- C++ -*-===//
//
// Gradient all-reduces that send a fraction of the bytes (seed document
// 002): top-k sparsification (each rank sends its k largest entries by
// magnitude as index-value pairs, all-gathered and added) and PowerSGD
// (Vogels et al., 2019: a rank-r approximation P Q^T of the summed matrix
// from two small all-reduces, with the previous iteration's Q as the warm
// start). Both keep what they did not send in a residual that is added to
// the next gradient of the same call site (error feedback), so that no
// part of a gradient is lost, only delayed. The state lives in the context
// per call site (a number the compiler gives each compressed all-reduce).
// They work on host memory (the CPU backend), in f32. Stale-synchronous
// all-reduces (metart_all_reduce_stale) keep their recent inputs per call
// site here too.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_COMPRESSION_H
#define METART_SRC_COMM_COMPRESSION_H

#include "Communicator.h"

#include <map>
#include <vector>

namespace metart::comm {

/// Error feedback and warm start of one call site.
struct CompressionSite {
  std::vector<float> residual;
  /// PowerSGD's Q (cols x rank, row-major), the last iteration's.
  std::vector<float> q;
};

/// A stale-synchronous all-reduce's call site (--staleness=S): the S + 1
/// most recent inputs, each summed in place by a started all-reduce, and
/// the number of calls so far.
struct StaleSite {
  std::vector<std::vector<char>> ring;
  int64_t calls = 0;
};

/// Every call site's state, in one context.
struct CompressionState {
  std::map<int64_t, CompressionSite> sites;
  std::map<int64_t, StaleSite> stale;
};

/// The k of top-k: `ratio` of n, at least 1.
int64_t topKCount(int64_t n, double ratio);
/// The bytes a rank sends: k index-value pairs.
size_t topKBytes(int64_t n, double ratio);
/// y = the sum over the group of each rank's k largest entries of x plus
/// its residual; the residual keeps the rest. Same bits on every rank.
KernelStatus topKAllReduce(Transport &transport, int mask, int64_t groupSize,
                           const float *x, float *y, int64_t n, double ratio,
                           CompressionSite &site);

/// Whether PowerSGD compresses a rows x cols matrix at `rank`: only when
/// its two factors are smaller than the matrix (else the all-reduce is
/// exact, as in PyTorch's PowerSGD hook).
bool powerSgdCompresses(int64_t rows, int64_t cols, int64_t rank);
/// The bytes a rank sends: P (rows x rank) and Q (cols x rank) in f32.
size_t powerSgdBytes(int64_t rows, int64_t cols, int64_t rank);
/// y (rows x cols) = P Q^T, PowerSGD's rank-`rank` approximation of the
/// sum over the group of x plus each rank's residual.
KernelStatus powerSgdAllReduce(Transport &transport, int mask, const float *x,
                               float *y, int64_t rows, int64_t cols,
                               int64_t rank, CompressionSite &site);

} // namespace metart::comm

#endif // METART_SRC_COMM_COMPRESSION_H
