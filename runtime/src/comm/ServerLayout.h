//===- ServerLayout.h - what parameter servers hold and send ----*- C++ -*-===//
//
// The parameters as one flat vector (their concatenation, in order), each
// server's contiguous slice of it, and the messages: a push is a header of
// doubles (the pusher's meta-loss, its iteration, the loss's dtype) and the
// server's slice of the gradient; a reply is a header (the version: updates
// applied so far, the summed meta-loss, the squared norm of each
// parameter's part in the slice) and the slice of the parameters.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_SERVERLAYOUT_H
#define METART_SRC_COMM_SERVERLAYOUT_H

#include "metart/metart.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace metart::comm::servers {

enum Tag {
  kInitTag = 7101,
  kPushTag = 7102,
  kReplyTag = 7103,
  kStateTag = 7104,
  /// From the first worker, after its last push: [version, wantState].
  kStopTag = 7105
};
/// Doubles before the parameters of an initial or a state message: the
/// iteration (initial) or version (state), and the optimizer's step count.
constexpr int kStateHeader = 2;
constexpr int kPushHeader = 3; // loss, iteration, loss dtype
/// The axes the servers' traffic is reported under (task and data: the
/// sums it replaces).
constexpr int kServerMask = 3;

/// One parameter's part in a server's slice.
struct Piece {
  int64_t param = 0;
  int64_t flat = 0;  // its first element in the flat vector
  int64_t local = 0; // ... and in the server's slice
  int64_t count = 0;
};

struct Layout {
  int64_t workers = 0, servers = 0;
  metart_dtype dtype = METART_F32;
  size_t elementBytes = 4;
  std::vector<int64_t> offsets, sizes; // per parameter, in elements
  int64_t total = 0;

  int64_t numParams() const { return static_cast<int64_t>(sizes.size()); }
  int64_t begin(int64_t server) const {
    return static_cast<int64_t>(static_cast<__int128>(total) * server /
                                servers);
  }
  int64_t length(int64_t server) const {
    return begin(server + 1) - begin(server);
  }
  std::vector<Piece> pieces(int64_t server) const {
    std::vector<Piece> out;
    int64_t lo = begin(server), hi = begin(server + 1);
    for (int64_t i = 0; i < numParams(); ++i) {
      int64_t a = std::max(lo, offsets[i]),
              b = std::min(hi, offsets[i] + sizes[i]);
      if (a < b)
        out.push_back({i, a, a - lo, b - a});
    }
    return out;
  }
  /// Doubles before a reply's parameters.
  size_t replyHeader() const { return 2 + sizes.size(); }
  size_t pushBytes(int64_t server) const {
    return kPushHeader * sizeof(double) + length(server) * elementBytes;
  }
  size_t replyBytes(int64_t server) const {
    return replyHeader() * sizeof(double) + length(server) * elementBytes;
  }
  /// An initial or a state message: header, parameters, `kinds` state
  /// slices.
  size_t stateBytes(int64_t server, int32_t kinds) const {
    return kStateHeader * sizeof(double) +
           (1 + kinds) * length(server) * elementBytes;
  }
};

} // namespace metart::comm::servers

#endif // METART_SRC_COMM_SERVERLAYOUT_H
