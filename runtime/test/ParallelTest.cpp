//===- ParallelTest.cpp - loops split over the CPU backend's threads ------===//

#include "cpu/Parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace {

using metart::cpu::parallelFor;

/// Runs a loop of `n` indices with `grain` and checks that every index was
/// visited exactly once, by ranges of at least `grain` (but for a loop too
/// small to split).
void expectEachIndexOnce(int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> visits(static_cast<size_t>(n));
  std::atomic<int64_t> shortest{n};
  parallelFor(n, grain, [&](int64_t begin, int64_t end) {
    ASSERT_LE(0, begin);
    ASSERT_LT(begin, end);
    ASSERT_LE(end, n);
    int64_t length = end - begin;
    int64_t seen = shortest.load();
    while (length < seen && !shortest.compare_exchange_weak(seen, length)) {
    }
    for (int64_t i = begin; i < end; ++i)
      visits[static_cast<size_t>(i)].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(visits[static_cast<size_t>(i)].load(), 1) << "index " << i;
  if (n > 0)
    EXPECT_GE(shortest.load(), std::min(n, grain));
}

TEST(Parallel, VisitsEveryIndexOnce) {
  EXPECT_GE(metart::cpu::parallelThreads(), 1);
  for (int64_t n : {0, 1, 7, 100, 8191, 8192, 16383, 16384, 100003, 1 << 20})
    expectEachIndexOnce(n, metart::cpu::kElementGrain);
  expectEachIndexOnce(1000, 1);
}

TEST(Parallel, ManyLoopsInARowEachComplete) {
  // Workers that wake late must not run a chunk of a newer loop twice.
  std::vector<int64_t> data(1 << 16, 0);
  for (int round = 0; round < 2000; ++round)
    parallelFor(static_cast<int64_t>(data.size()), 1024,
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i)
                    ++data[static_cast<size_t>(i)];
                });
  for (int64_t v : data)
    ASSERT_EQ(v, 2000);
}

TEST(Parallel, LoopsFromTwoThreadsAtOnce) {
  // A loop started while another runs goes on its caller's thread alone.
  std::vector<int64_t> a(1 << 18, 0), b(1 << 18, 0);
  auto bump = [](std::vector<int64_t> &v) {
    for (int round = 0; round < 200; ++round)
      parallelFor(static_cast<int64_t>(v.size()), 4096,
                  [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i)
                      ++v[static_cast<size_t>(i)];
                  });
  };
  std::thread other([&] { bump(b); });
  bump(a);
  other.join();
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i], 200) << i;
    ASSERT_EQ(b[i], 200) << i;
  }
}

} // namespace
