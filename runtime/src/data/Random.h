//===- Random.h - counter-based random numbers for tasks --------*- C++ -*-===//
//
// Tasks are drawn from generators whose state is a pure function of where
// the task sits (seed, split, iteration, task index), never of what was
// drawn before: any rank can draw any slice of a meta-batch and get what
// one rank drawing all of it would. The generator is splitmix64, whose n-th
// output is a mix of its starting state plus n times a constant, so a
// stream is a counter passed through a bijective 64-bit mix.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_DATA_RANDOM_H
#define METART_SRC_DATA_RANDOM_H

#include <cstdint>
#include <initializer_list>

namespace metart::data {

/// splitmix64's increment: 2^64 divided by the golden ratio, odd.
inline constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;

/// splitmix64's finalizer (Stafford's Mix13): a bijection on 64 bits whose
/// output bits each depend on every input bit.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Hashes a sequence of words into a generator state. Distinct sequences of
/// the same length give distinct states for any one prefix (each step is a
/// bijection of the word), and states unrelated to each other otherwise.
inline uint64_t hashWords(std::initializer_list<uint64_t> words) {
  uint64_t state = 0;
  for (uint64_t word : words)
    state = mix64(state ^ mix64(word + kGoldenGamma));
  return state;
}

/// splitmix64 from a given state: a counter-based stream of 64-bit words.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t state) : state(state) {}

  uint64_t next() { return mix64(state += kGoldenGamma); }

  /// A double uniform between `low` and `high` (`low` when they are equal):
  /// low + (high - low) u, with u in [0, 1) from the next word's top 53 bits.
  double uniform(double low, double high) {
    double unit = static_cast<double>(next() >> 11) * 0x1.0p-53;
    return low + (high - low) * unit;
  }

  /// An integer uniform in [0, `n`), `n` >= 1: the high word of next() * n
  /// (Lemire), redrawn when the low word falls in the `2^64 mod n` values
  /// that would favour small results.
  uint64_t below(uint64_t n) {
    unsigned __int128 product = static_cast<unsigned __int128>(next()) * n;
    uint64_t threshold = (0 - n) % n;
    while (static_cast<uint64_t>(product) < threshold)
      product = static_cast<unsigned __int128>(next()) * n;
    return static_cast<uint64_t>(product >> 64);
  }

private:
  uint64_t state;
};

} // namespace metart::data

#endif // METART_SRC_DATA_RANDOM_H
