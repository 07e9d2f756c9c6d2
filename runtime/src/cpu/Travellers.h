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

  /// Every entry one rank along: the next rank's block arrives.
  KernelStatus rotate() {
    std::vector<RingBuffer> moves;
    for (Entry &e : entries) {
      if (!e.current)
        continue;
      std::vector<T> &into = e.work[e.next];
      into.resize(e.count);
      moves.push_back({e.current, into.data(), e.count, kDtype});
      e.current = into.data();
      e.next ^= 1;
    }
    return ring.rotate(moves.data(), int(moves.size()));
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
};

/// Calls `visit(block)` with the sizes of each key block this rank's
/// queries see, in ring order, rotating `travellers` between blocks (a
/// block a causal rank does not see still passes through).
template <typename T, typename Visit>
KernelStatus forEachKeyBlock(KeyRing &ring, Travellers<T> &travellers,
                             const AttentionSizes &whole, Visit visit) {
  for (int64_t step = 0; step < ring.size(); ++step) {
    if (step > 0)
      if (KernelStatus status = travellers.rotate(); status.failed())
        return status;
    AttentionSizes block;
    if (ring.sizesAt(step, whole, block))
      visit(block);
  }
  return KernelStatus::ok();
}

} // namespace metart::cpu

#endif // METART_SRC_CPU_TRAVELLERS_H
