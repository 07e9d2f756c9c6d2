//===- AsyncCollectivesTest.cpp - started collectives, waited for later ---===//
//
// metart_all_reduce_start / metart_reduce_scatter_start with
// metart_collective_wait give the blocking collectives' results on every
// mask of every mesh, also when blocking collectives over other masks are
// issued between start and wait (they keep program order behind the
// started ones); the caller's own work runs meanwhile; misuse gets an
// error.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <cstring>

using namespace metart::test;

namespace {

std::string where(const Mesh &mesh, int mask) {
  return meshName(mesh) + ", mask " + metart_comm_axes_name(mask) + ", rank " +
         std::to_string(metart_world_rank());
}

TEST(AsyncCollectives, AllReduceEqualsBlockingWithCollectivesBetween) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask)
      for (int32_t algorithm :
           {METART_ALLREDUCE_LIBRARY, METART_ALLREDUCE_RING})
        for (int32_t wire : {METART_F32, METART_BF16}) {
          const int64_t length = 1001;
          HostTensor x({length}, METART_F32), started({length}, METART_F32),
              blocking({length}, METART_F32);
          x.fillInput(metart_world_rank());
          ASSERT_EQ(metart_all_reduce_start(c, &x.t, &started.t, mask,
                                            METART_REDUCE_SUM, algorithm, wire),
                    METART_OK)
              << metart_context_last_error(c);
          // Blocking collectives over every other mask while it runs:
          // queued behind it, so every rank's order stays the program's.
          HostTensor other({8}, METART_F64);
          for (int between = 0; between < 16; ++between) {
            other.fillInput(metart_world_rank());
            ASSERT_EQ(metart_all_reduce(c, &other.t, &other.t, between,
                                        METART_REDUCE_MAX),
                      METART_OK);
          }
          ASSERT_EQ(metart_collective_wait(c, &started.t), METART_OK)
              << metart_context_last_error(c);
          ASSERT_EQ(metart_all_reduce_algorithm(c, &x.t, &blocking.t, mask,
                                                METART_REDUCE_SUM, algorithm,
                                                wire),
                    METART_OK);
          EXPECT_EQ(0, std::memcmp(started.bytes.data(), blocking.bytes.data(),
                                   blocking.bytes.size()))
              << where(mesh, mask);
        }
  }
}

TEST(AsyncCollectives, ManyInFlightAndReduceScatter) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      int64_t size = static_cast<int64_t>(groupOf(mesh, mask).size());
      // Three all-reduces and a reduce-scatter along dim 1 (regrouped
      // blocks) in flight at once, waited for in another order.
      std::vector<HostTensor> xs, ys;
      xs.reserve(3); // the descriptors point into the tensors' own vectors
      ys.reserve(3);
      for (int k = 0; k < 3; ++k) {
        xs.emplace_back(std::vector<int64_t>{5 + k}, METART_F64);
        ys.emplace_back(std::vector<int64_t>{5 + k}, METART_F64);
        xs.back().fillInput(metart_world_rank() + k);
      }
      HostTensor rx({3, 2 * size}, METART_F32), ry({3, 2}, METART_F32),
          rblocking({3, 2}, METART_F32);
      rx.fillInput(metart_world_rank());
      for (int k = 0; k < 3; ++k)
        ASSERT_EQ(metart_all_reduce_start(c, &xs[k].t, &ys[k].t, mask,
                                          METART_REDUCE_SUM,
                                          METART_ALLREDUCE_LIBRARY, METART_F64),
                  METART_OK);
      ASSERT_EQ(metart_reduce_scatter_start(c, &rx.t, &ry.t, mask, 1,
                                            METART_REDUCE_SUM,
                                            METART_ALLREDUCE_RING),
                METART_OK)
          << metart_context_last_error(c);
      for (int k : {2, 0, 1})
        ASSERT_EQ(metart_collective_wait(c, &ys[k].t), METART_OK);
      ASSERT_EQ(metart_collective_wait(c, &ry.t), METART_OK);
      ASSERT_EQ(metart_reduce_scatter(c, &rx.t, &rblocking.t, mask, 1,
                                      METART_REDUCE_SUM),
                METART_OK);
      for (int64_t i = 0; i < 6; ++i)
        EXPECT_EQ(ry.get(i), rblocking.get(i)) << where(mesh, mask);
      std::vector<int64_t> group = groupOf(mesh, mask);
      for (int k = 0; k < 3; ++k)
        for (int64_t i = 0; i < 5 + k; ++i) {
          double expected = 0;
          for (int64_t r : group)
            expected += inputValue(r + k, i);
          EXPECT_EQ(ys[k].get(i), expected) << where(mesh, mask);
        }
    }
  }
}

TEST(AsyncCollectives, OverlappedTimeIsCounted) {
  MeshContext c(Mesh{metart_world_size(), 1, 1, 1, 1, 1});
  HostTensor x({1 << 16}, METART_F32), y({1 << 16}, METART_F32);
  metart_comm_stats_reset(c);
  ASSERT_EQ(metart_all_reduce_start(c, &x.t, &y.t, 1, METART_REDUCE_SUM,
                                    METART_ALLREDUCE_LIBRARY, METART_F32),
            METART_OK);
  ASSERT_EQ(metart_collective_wait(c, &y.t), METART_OK);
  metart_comm_stats s;
  ASSERT_EQ(metart_comm_stats_get(c, 1, &s), METART_OK);
  EXPECT_EQ(s.calls, 1);
  EXPECT_EQ(s.async_calls, 1);
  EXPECT_GE(s.overlapped_seconds, 0);
  EXPECT_LE(s.overlapped_seconds, s.seconds);
}

TEST(AsyncCollectives, MisuseIsAnError) {
  MeshContext c(Mesh{metart_world_size(), 1, 1, 1, 1, 1});
  HostTensor x({4}, METART_F32), y({4}, METART_F32);
  EXPECT_EQ(metart_collective_wait(c, &y.t), METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(c)).find("was started"),
            std::string::npos)
      << metart_context_last_error(c);
  ASSERT_EQ(metart_all_reduce_start(c, &x.t, &y.t, 1, METART_REDUCE_SUM,
                                    METART_ALLREDUCE_LIBRARY, METART_F32),
            METART_OK);
  // A second start into the same y before the wait: refused (and, having
  // been checked before it is queued, not sent: every rank refuses it).
  EXPECT_EQ(metart_all_reduce_start(c, &x.t, &y.t, 1, METART_REDUCE_SUM,
                                    METART_ALLREDUCE_LIBRARY, METART_F32),
            METART_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(metart_collective_wait(c, &y.t), METART_OK);
  EXPECT_EQ(metart_collective_wait(c, &y.t), METART_ERROR_INVALID_ARGUMENT);
  // Checked at the start like the blocking all-reduce.
  HostTensor wrong({5}, METART_F32);
  EXPECT_EQ(metart_all_reduce_start(c, &x.t, &wrong.t, 1, METART_REDUCE_SUM,
                                    METART_ALLREDUCE_LIBRARY, METART_F32),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(metart_all_reduce_start(c, &x.t, &y.t, 1, METART_REDUCE_SUM, 9,
                                    METART_F32),
            METART_ERROR_INVALID_ARGUMENT);
}

} // namespace
