//===- KeyRing.h - the key blocks of ring attention -------------*- C++ -*-===//
//
// Ring attention splits a sequence's positions over the ranks of a mesh
// axis: rank r holds block r of the queries and block r of the keys and
// values. The attention kernels visit every key block by passing the blocks
// around the ring (each rank sends its current block to the next rank and
// takes the previous rank's), so no rank ever holds all the keys. A kernel
// sees the ring through this interface; a ring of one rank (plain
// attention) never rotates.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_KEYRING_H
#define METART_SRC_KEYRING_H

#include "KernelSizes.h"

#include <cstddef>
#include <cstdint>

namespace metart {

/// One buffer that travels with the keys: `count` elements of `from` go to
/// the next rank, and the previous rank's arrive in `into` (not `from`).
struct RingBuffer {
  const void *from;
  void *into;
  int64_t count;
  metart_dtype dtype;
};

class KeyRing {
public:
  virtual ~KeyRing() = default;
  /// The ranks of the ring and this rank's place on it.
  virtual int64_t size() const { return 1; }
  virtual int64_t position() const { return 0; }
  /// Moves every buffer one rank along the ring (all ranks call it with
  /// buffers of the same sizes).
  virtual KernelStatus rotate(const RingBuffer *buffers, int count) {
    return {METART_ERROR_BACKEND, "a ring of one rank does not rotate"};
  }
  /// Starts a rotation that completes in finishRotate, so that the caller
  /// computes while the blocks travel (the sources must stay unchanged
  /// until then, the destinations unread). By default it rotates now.
  virtual KernelStatus startRotate(const RingBuffer *buffers, int count) {
    return rotate(buffers, count);
  }
  virtual KernelStatus finishRotate() { return KernelStatus::ok(); }
  /// Sends `count` elements to the rank at ring position `to`, or receives
  /// them from `from` (blocking; every rank issues its transfers in one
  /// global order, so that each pair meets).
  virtual KernelStatus send(const void *data, int64_t count, metart_dtype dtype,
                            int64_t to) {
    return {METART_ERROR_BACKEND, "a ring of one rank does not send"};
  }
  virtual KernelStatus recv(void *data, int64_t count, metart_dtype dtype,
                            int64_t from) {
    return {METART_ERROR_BACKEND, "a ring of one rank does not receive"};
  }

  /// The key block a rank holds after `step` rotations: the previous
  /// rank's blocks arrive one by one.
  int64_t blockAt(int64_t step) const {
    return ((position() - step) % size() + size()) % size();
  }
  /// The sizes with which this rank's queries attend to the key block held
  /// after `step` rotations, or false when they see none of it. Here each
  /// rank holds one contiguous block of positions: causal attention sees
  /// all of an earlier block, its own block up to the diagonal, nothing of
  /// a later one.
  virtual bool sizesAt(int64_t step, const AttentionSizes &whole,
                       AttentionSizes &block) const {
    block = whole;
    if (!whole.causal)
      return true;
    int64_t b = blockAt(step);
    block.causal = b == position();
    return b <= position();
  }
};

} // namespace metart

#endif // METART_SRC_KEYRING_H
