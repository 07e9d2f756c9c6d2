//===- StatsTest.cpp - counters of collectives per axes mask
//---------------===//

#include "Harness.h"

using namespace metart::test;

namespace {

TEST(CommStats, CountCallsAndPayloadBytesPerMask) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    metart_comm_stats_reset(c);
    HostTensor x({4, 2}, METART_F32), y({4, 2}, METART_F32);
    x.fillInput(0);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      int64_t n = groupOf(mesh, mask).size();
      HostTensor gathered({4 * n, 2}, METART_F32);
      ASSERT_EQ(metart_all_reduce(c, &x.t, &y.t, mask, METART_REDUCE_SUM),
                METART_OK);
      ASSERT_EQ(metart_all_reduce(c, &x.t, &y.t, mask, METART_REDUCE_MAX),
                METART_OK);
      ASSERT_EQ(metart_all_gather(c, &x.t, &gathered.t, mask, 0), METART_OK);
      ASSERT_EQ(metart_all_slice(c, &gathered.t, &x.t, mask, 0), METART_OK);
      ASSERT_EQ(metart_broadcast(c, &x.t, &y.t, mask, 0), METART_OK);
      metart_comm_stats s;
      ASSERT_EQ(metart_comm_stats_get(c, mask, &s), METART_OK);
      EXPECT_EQ(s.calls, 5) << meshName(mesh) << " mask " << mask;
      // x is 32 bytes; a group of one moves nothing.
      int64_t moved = n > 1 ? 32 + 32 + 32 * n + 0 + 32 : 0;
      EXPECT_EQ(s.bytes, moved) << meshName(mesh) << " mask " << mask;
      EXPECT_GE(s.seconds, 0.0);
    }
    metart_comm_stats total;
    ASSERT_EQ(metart_comm_stats_total(c, &total), METART_OK);
    EXPECT_EQ(total.calls, 5 * (1 << METART_NUM_AXES));
    metart_comm_stats_reset(c);
    ASSERT_EQ(metart_comm_stats_total(c, &total), METART_OK);
    EXPECT_EQ(total.calls, 0);
    EXPECT_EQ(total.bytes, 0);
    EXPECT_EQ(total.seconds, 0.0);
  }
}

TEST(CommStats, SendAndReceiveCountTheirTensors) {
  if (metart_world_size() < 2)
    GTEST_SKIP() << "needs two ranks";
  MeshContext c({1, 1, 1, metart_world_size()});
  HostTensor x({10}, METART_F64);
  int64_t rank = metart_world_rank();
  if (rank == 0)
    ASSERT_EQ(metart_send(c, &x.t, 8, 1), METART_OK);
  if (rank == 1)
    ASSERT_EQ(metart_recv(c, &x.t, 8, 0), METART_OK);
  metart_comm_stats s;
  ASSERT_EQ(metart_comm_stats_get(c, 8, &s), METART_OK);
  EXPECT_EQ(s.calls, rank < 2 ? 1 : 0);
  EXPECT_EQ(s.bytes, rank < 2 ? 80 : 0);
}

TEST(CommStats, MasksHaveAxisNames) {
  EXPECT_STREQ(metart_comm_axes_name(0), "none");
  EXPECT_STREQ(metart_comm_axes_name(1), "task");
  EXPECT_STREQ(metart_comm_axes_name(2), "data");
  EXPECT_STREQ(metart_comm_axes_name(4), "tensor");
  EXPECT_STREQ(metart_comm_axes_name(8), "pipeline");
  EXPECT_STREQ(metart_comm_axes_name(3), "task+data");
  EXPECT_STREQ(metart_comm_axes_name(15), "task+data+tensor+pipeline");
  EXPECT_STREQ(metart_comm_axes_name(16), "expert");
  EXPECT_STREQ(metart_comm_axes_name(17), "task+expert");
  EXPECT_STREQ(metart_comm_axes_name(32), "sequence");
  EXPECT_STREQ(metart_comm_axes_name(63),
               "task+data+tensor+pipeline+expert+sequence");
  EXPECT_STREQ(metart_comm_axes_name(64), "");
  EXPECT_STREQ(metart_comm_axes_name(-1), "");
}

} // namespace
