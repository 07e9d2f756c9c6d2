//===- Zigzag.h - a balanced layout for causal ring attention ---*- C++ -*-===//
//
// With the sequence split into contiguous blocks, rank r of a causal ring
// sees r + 1/2 blocks of the triangle: the last rank holds the critical path.
// In the zigzag layout (ring-flash-attention's; Striped Attention balances
// the same way) the sequence is cut into 2S chunks and rank r holds chunk r
// and chunk 2S - 1 - r, one from each end: every rank then sees S of the
// (2S)^2 / 2 chunk pairs. The partitioner keeps the contiguous split that
// every other op of the sequence axis shares, so the causal kernels move
// their operands into the zigzag layout, run on it (each key block's
// positions are two runs, KeyRing::sizesAt below) and move their results
// back: half of each operand changes rank, once in and once out, where the
// ring passes every key block S - 1 times.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_ZIGZAG_H
#define METART_SRC_CPU_ZIGZAG_H

#include "../KeyRing.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace metart::cpu {

/// Whether causal ring attention with these sizes runs in the zigzag
/// layout: a ring of several ranks, as many queries as keys (always so
/// when causal), an even block, and METART_RING_LAYOUT not `contiguous`.
inline bool usesZigzag(const AttentionSizes &s, const KeyRing &ring) {
  if (!s.causal || ring.size() < 2 || s.length != s.keys || s.length % 2)
    return false;
  const char *layout = std::getenv("METART_RING_LAYOUT");
  return !layout || std::strcmp(layout, "contiguous") != 0;
}

/// The ring as the zigzag layout sees it: rank r holds chunks r and
/// 2S - 1 - r of `length / 2` positions, and so does each key block.
class ZigzagRing final : public KeyRing {
public:
  explicit ZigzagRing(KeyRing &ring) : ring(ring) {}
  int64_t size() const override { return ring.size(); }
  int64_t position() const override { return ring.position(); }
  KernelStatus rotate(const RingBuffer *buffers, int count) override {
    return ring.rotate(buffers, count);
  }
  KernelStatus startRotate(const RingBuffer *buffers, int count) override {
    return ring.startRotate(buffers, count);
  }
  KernelStatus finishRotate() override { return ring.finishRotate(); }
  bool sizesAt(int64_t step, const AttentionSizes &whole,
               AttentionSizes &block) const override {
    block = whole;
    int64_t half = whole.length / 2, last = 2 * size() - 1;
    int64_t r = position(), b = blockAt(step);
    block.queryPositions = {{r * half, (last - r) * half}, half};
    block.keyPositions = {{b * half, (last - b) * half}, half};
    return true;
  }

private:
  KeyRing &ring;
};

/// One operand or result of `batch` blocks of `length` positions of
/// `features` elements: `contiguous` in the partitioner's layout,
/// `zigzag` in the kernel's (null: absent).
template <typename T> struct ZigzagTensor {
  const T *contiguous;
  T *zigzag;
  int64_t features;
};

/// Moves tensors between the layouts: to the zigzag one (`toZigzag`, from
/// `contiguous` into `zigzag`) or back (from `zigzag` into `contiguous`).
/// Chunk c is half c % 2 of block c / 2 in the contiguous layout, and half
/// (c < S ? 0 : 1) of rank (c < S ? c : 2S - 1 - c) in the zigzag one. Every
/// rank walks the tensors and chunks in one order, so the first pending
/// transfer always has both its ranks waiting on it.
template <typename T>
KernelStatus relayout(KeyRing &ring, bool toZigzag, int64_t batch,
                      int64_t length, const std::vector<ZigzagTensor<T>> &all) {
  constexpr metart_dtype dtype =
      sizeof(T) == sizeof(double) ? METART_F64 : METART_F32;
  int64_t ranks = ring.size(), me = ring.position(), half = length / 2;
  std::vector<T> staged;
  for (const ZigzagTensor<T> &t : all) {
    if (!t.zigzag)
      continue;
    int64_t rowSize = half * t.features, blockSize = length * t.features;
    const T *from = toZigzag ? t.contiguous : t.zigzag;
    T *to = toZigzag ? t.zigzag : const_cast<T *>(t.contiguous);
    staged.resize(batch * rowSize);
    for (int64_t c = 0; c < 2 * ranks; ++c) {
      int64_t blockRank = c / 2, blockHalf = c % 2;
      int64_t zigzagRank = c < ranks ? c : 2 * ranks - 1 - c;
      int64_t zigzagHalf = c < ranks ? 0 : 1;
      int64_t source = toZigzag ? blockRank : zigzagRank;
      int64_t target = toZigzag ? zigzagRank : blockRank;
      int64_t sourceHalf = toZigzag ? blockHalf : zigzagHalf;
      int64_t targetHalf = toZigzag ? zigzagHalf : blockHalf;
      if (source != me && target != me)
        continue;
      if (source == me)
        for (int64_t b = 0; b < batch; ++b) {
          const T *chunk = from + b * blockSize + sourceHalf * rowSize;
          std::copy(chunk, chunk + rowSize, staged.data() + b * rowSize);
        }
      if (source == me && target != me)
        if (KernelStatus s =
                ring.send(staged.data(), batch * rowSize, dtype, target);
            s.failed())
          return s;
      if (target == me && source != me)
        if (KernelStatus s =
                ring.recv(staged.data(), batch * rowSize, dtype, source);
            s.failed())
          return s;
      if (target == me)
        for (int64_t b = 0; b < batch; ++b)
          std::copy(staged.data() + b * rowSize,
                    staged.data() + (b + 1) * rowSize,
                    to + b * blockSize + targetHalf * rowSize);
    }
  }
  return KernelStatus::ok();
}

/// Runs `kernel(ring, zigzag operands..., zigzag results...)`, through
/// the zigzag layout: `inputs` are moved into it before and `outputs` back
/// after (each a ZigzagTensor whose `zigzag` the caller leaves null; it is
/// filled here from buffers this call owns).
template <typename T, typename Kernel>
KernelStatus inZigzagLayout(KeyRing &ring, int64_t batch, int64_t length,
                            std::vector<ZigzagTensor<T>> inputs,
                            std::vector<ZigzagTensor<T>> outputs,
                            Kernel kernel) {
  std::vector<std::vector<T>> buffers;
  auto place = [&](std::vector<ZigzagTensor<T>> &tensors) {
    for (ZigzagTensor<T> &t : tensors)
      if (t.contiguous) {
        buffers.emplace_back(batch * length * t.features);
        t.zigzag = buffers.back().data();
      }
  };
  place(inputs);
  place(outputs);
  if (KernelStatus s = relayout(ring, true, batch, length, inputs); s.failed())
    return s;
  ZigzagRing zigzag(ring);
  std::vector<const T *> in;
  for (const ZigzagTensor<T> &t : inputs)
    in.push_back(t.zigzag);
  std::vector<T *> out;
  for (const ZigzagTensor<T> &t : outputs)
    out.push_back(t.zigzag);
  if (KernelStatus s = kernel(zigzag, in, out); s.failed())
    return s;
  return relayout(ring, false, batch, length, outputs);
}

} // namespace metart::cpu

#endif // METART_SRC_CPU_ZIGZAG_H
