//===- PlacementTest.cpp - oversubscribed ranks pinned to cores -----------===//
//
// The rule on known layouts, and in the job itself: with more ranks than
// the cores they may use (4 ranks on this 2-core machine), each rank runs
// on the one core the rule gives it after attaching a mesh.
//
//===----------------------------------------------------------------------===//

#include "comm/Placement.h"
#include "Harness.h"

#include <sched.h>

using namespace metart::test;
using metart::comm::coresBeforePinning;
using metart::comm::pinnedCoreIndex;

namespace {

std::vector<int64_t> coresOf(const Mesh &mesh, int64_t ranks, int64_t cores) {
  std::vector<int64_t> out;
  for (int64_t rank = 0; rank < ranks; ++rank)
    out.push_back(pinnedCoreIndex(mesh.data(), rank, ranks, cores));
  return out;
}

TEST(Placement, StagesAreDealtRoundTheCores) {
  using V = std::vector<int64_t>;
  // Four stages on two cores: neighbouring stages on different cores.
  EXPECT_EQ(coresOf({1, 1, 1, 4}, 4, 2), (V{0, 1, 0, 1}));
  // Two tasks of two stages (ranks t0s0, t0s1, t1s0, t1s1): each core
  // holds one rank of each stage.
  EXPECT_EQ(coresOf({2, 1, 1, 2}, 4, 2), (V{0, 0, 1, 1}));
  // No pipeline: rank order.
  EXPECT_EQ(coresOf({4, 1, 1, 1}, 4, 2), (V{0, 1, 0, 1}));
  // Two tasks of four stages: each core holds one rank of every stage.
  EXPECT_EQ(coresOf({2, 1, 1, 4}, 8, 2), (V{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(coresOf({1, 1, 1, 8}, 8, 4), (V{0, 1, 2, 3, 0, 1, 2, 3}));
  // Two stages of two expert ranks (ranks s0e0, s0e1, s1e0, s1e1: the
  // expert axis varies fastest): each core holds one rank of each stage.
  EXPECT_EQ(coresOf({1, 1, 1, 2, 2}, 4, 2), (V{0, 1, 0, 1}));
  // And with a sequence axis inside the expert axis (s0e0q0, s0e0q1, ...).
  EXPECT_EQ(coresOf({1, 1, 1, 2, 1, 2}, 4, 2), (V{0, 1, 0, 1}));
  EXPECT_EQ(coresOf({1, 1, 1, 2, 2, 2}, 8, 2), (V{0, 1, 0, 1, 0, 1, 0, 1}));
  // Not oversubscribed, or not a multiple of the cores: left alone.
  EXPECT_EQ(coresOf({2, 1, 1, 1}, 2, 2), (V{-1, -1}));
  EXPECT_EQ(coresOf({5, 1, 1, 1}, 5, 2), (V{-1, -1, -1, -1, -1}));
}

TEST(Placement, OversubscribedRanksRunOnTheirCore) {
  std::vector<int> before = coresBeforePinning();
  ASSERT_FALSE(before.empty());
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    cpu_set_t now;
    ASSERT_EQ(sched_getaffinity(0, sizeof(now), &now), 0);
    int64_t index = pinnedCoreIndex(mesh.data(), metart_world_rank(),
                                    metart_world_size(), before.size());
    if (index < 0) {
      EXPECT_EQ(CPU_COUNT(&now), int(before.size())) << meshName(mesh);
    } else {
      EXPECT_EQ(CPU_COUNT(&now), 1) << meshName(mesh);
      EXPECT_TRUE(CPU_ISSET(before[index], &now)) << meshName(mesh);
    }
    EXPECT_EQ(metart_barrier(c, METART_ALL_AXES), METART_OK);
  }
}

} // namespace
