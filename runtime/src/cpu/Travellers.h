//===- Travellers.h - tensors that travel with ring attention's keys -*- C++
//-*-//
//
// The key-side operands of an attention kernel (keys, values, their
// cotangents' inputs) travel the ring block by block, and so do the sums of
// their cotangents, which reach the rank owning their block at the end. On
// a ring of one nothing moves: the operands are read where they are and the
// sums go straight into the outputs.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_TRAVELLERS_H
#define METART_SRC_CPU_TRAVELLERS_H

#include "../KeyRing.h"

#include <algorithm>
#include <vector>

namespace metart::cpu {

template <typename T> class Travellers {
public:
  explicit Travellers(KeyRing &ring) : ring(ring) {}

  /// An operand of `count` elements (null: absent); returns its index.
  size_t read(const T *data, int64_t count) {
    entries.emplace_back(data, nullptr, count);
    return entries.size() - 1;
  }
  /// A cotangent of `count` elements summed into `output` (null: not
  /// asked for), zero at first; returns its index.
  size_t sum(T *output, int64_t count) {
    Entry e(nullptr, output, count);
    if (output && ring.size() > 1) {
      e.work[0].assign(count, T(0));
      e.current = e.work[0].data();
    } else if (output) {
      std::fill(output, output + count, T(0));
      e.current = output;
    }
    entries.push_back(std::move(e));
    return entries.size() - 1;
  }

  const T *operator[](size_t i) const { return entries[i].current; }
  T *sumAt(size_t i) { return const_cast<T *>(entries[i].current); }

  /// Starts moving the operands one rank along: the next rank's block
  /// arrives in finishOperands, and the current one stays readable until
  /// then (the ring may move it while the caller computes on it).
  KernelStatus startOperands() {
    operandMoves = movesOf(false, operandsArriving);
    if (operandMoves.empty())
      return KernelStatus::ok();
    return ring.startRotate(operandMoves.data(), int(operandMoves.size()));
  }
  KernelStatus finishOperands() {
    KernelStatus status =
        operandMoves.empty() ? KernelStatus::ok() : ring.finishRotate();
    arrive(operandsArriving);
    return status;
  }
  /// Moves the sums one rank along, with the block they belong to (after
  /// the caller has added the current block's terms).
  KernelStatus rotateSums() {
    std::vector<Entry *> arriving;
    std::vector<RingBuffer> moves = movesOf(true, arriving);
    if (moves.empty())
      return KernelStatus::ok();
    KernelStatus status = ring.rotate(moves.data(), int(moves.size()));
    arrive(arriving);
    return status;
  }

  /// After the last step, each sum belongs to the next rank's block: one
  /// more move delivers it into that rank's output.
  KernelStatus deliver() {
    if (ring.size() == 1)
      return KernelStatus::ok();
    std::vector<RingBuffer> moves;
    for (Entry &e : entries)
      if (e.output)
        moves.push_back({e.current, e.output, e.count, kDtype});
    return ring.rotate(moves.data(), int(moves.size()));
  }

private:
  struct Entry;
  /// The moves of the operands (`sums` false) or of the sums, each into
  /// its entry's other buffer; `arriving` lists their entries.
  std::vector<RingBuffer> movesOf(bool sums, std::vector<Entry *> &arriving) {
    std::vector<RingBuffer> moves;
    arriving.clear();
    for (Entry &e : entries) {
      if (!e.current || (e.output != nullptr) != sums)
        continue;
      std::vector<T> &into = e.work[e.next];
      into.resize(e.count);
      moves.push_back({e.current, into.data(), e.count, kDtype});
      arriving.push_back(&e);
    }
    return moves;
  }
  static void arrive(const std::vector<Entry *> &arriving) {
    for (Entry *e : arriving) {
      e->current = e->work[e->next].data();
      e->next ^= 1;
    }
  }

  static constexpr metart_dtype kDtype =
      sizeof(T) == sizeof(double) ? METART_F64 : METART_F32;
  struct Entry {
    Entry(const T *current, T *output, int64_t count)
        : current(current), output(output), count(count) {}
    const T *current;
    T *output;
    int64_t count;
    std::vector<T> work[2];
    int next = 1;
  };
  KeyRing &ring;
  std::vector<Entry> entries;
  std::vector<RingBuffer> operandMoves;
  std::vector<Entry *> operandsArriving;
};

/// Calls `visit(block)` with the sizes of each key block this rank's
/// queries see, in ring order, rotating `travellers` between blocks (a
/// block a causal rank does not see still passes through). The operands
/// of the next block travel while `visit` computes on the current one;
/// the sums move after it.
template <typename T, typename Visit>
KernelStatus forEachKeyBlock(KeyRing &ring, Travellers<T> &travellers,
                             const AttentionSizes &whole, Visit visit) {
  for (int64_t step = 0; step < ring.size(); ++step) {
    bool more = step + 1 < ring.size();
    if (more)
      if (KernelStatus status = travellers.startOperands(); status.failed())
        return status;
    AttentionSizes block;
    if (ring.sizesAt(step, whole, block))
      visit(block);
    if (more) {
      KernelStatus sums = travellers.rotateSums();
      KernelStatus operands = travellers.finishOperands();
      if (sums.failed())
        return sums;
      if (operands.failed())
        return operands;
    }
  }
  return KernelStatus::ok();
}

} // namespace metart::cpu

#endif // METART_SRC_CPU_TRAVELLERS_H
