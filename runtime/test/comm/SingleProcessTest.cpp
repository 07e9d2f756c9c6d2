//===- SingleProcessTest.cpp - no communicator, and errors
//-----------------===//
//
// Without a communicator every collective is the identity over a group of
// one, so single-process programs keep running; a mesh that does not match
// the job is an error before anything runs.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <string>

using namespace metart::test;

namespace {

TEST(NoCommunicator, CollectivesAreTheIdentity) {
  Context c;
  EXPECT_FALSE(metart_comm_attached(c));
  HostTensor x({2, 3}, METART_F32), y({2, 3}, METART_F32);
  x.fillInput(5);
  auto expectCopied = [&] {
    for (int64_t i = 0; i < 6; ++i)
      EXPECT_EQ(y.get(i), x.get(i));
    y.bytes.assign(y.bytes.size(), 0);
  };
  for (int mask : {0, 1, 3, 15}) {
    ASSERT_EQ(metart_all_reduce(c, &x.t, &y.t, mask, METART_REDUCE_SUM),
              METART_OK);
    expectCopied();
    ASSERT_EQ(metart_all_gather(c, &x.t, &y.t, mask, 1), METART_OK);
    expectCopied();
    ASSERT_EQ(metart_all_slice(c, &x.t, &y.t, mask, 0), METART_OK);
    expectCopied();
    ASSERT_EQ(metart_reduce_scatter(c, &x.t, &y.t, mask, 1, METART_REDUCE_MAX),
              METART_OK);
    expectCopied();
    ASSERT_EQ(metart_broadcast(c, &x.t, &y.t, mask, 0), METART_OK);
    expectCopied();
    // In place.
    ASSERT_EQ(metart_all_reduce(c, &x.t, &x.t, mask, METART_REDUCE_SUM),
              METART_OK);
    EXPECT_EQ(x.get(0), inputValue(5, 0));
    int64_t rank = -1, size = -1;
    ASSERT_EQ(metart_comm_group(c, mask, &rank, &size), METART_OK);
    EXPECT_EQ(rank, 0);
    EXPECT_EQ(size, 1);
  }
  // Nothing moved, but every call counts.
  metart_comm_stats total;
  ASSERT_EQ(metart_comm_stats_total(c, &total), METART_OK);
  EXPECT_EQ(total.calls, 4 * 6);
  EXPECT_EQ(total.bytes, 0);
  // A group of one has no peer.
  EXPECT_EQ(metart_send(c, &x.t, 1, 0), METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(c)).find("is this rank"),
            std::string::npos)
      << metart_context_last_error(c);
  EXPECT_EQ(metart_recv(c, &y.t, 1, 1), METART_ERROR_INVALID_ARGUMENT);
}

TEST(NoCommunicator, MeshIsOneRank) {
  Context c;
  int64_t mesh[METART_NUM_AXES], coords[METART_NUM_AXES];
  ASSERT_EQ(metart_comm_mesh(c, mesh, coords), METART_OK);
  for (int axis = 0; axis < METART_NUM_AXES; ++axis) {
    EXPECT_EQ(mesh[axis], 1);
    EXPECT_EQ(coords[axis], 0);
  }
  EXPECT_EQ(metart_barrier(c, METART_ALL_AXES), METART_OK);
}

TEST(Attach, RejectsAMeshOfAnotherSize) {
  Context c;
  int64_t n = metart_world_size();
  int64_t mesh[METART_NUM_AXES] = {2 * n, 0, 1, 1, 1, 1};
  EXPECT_EQ(metart_comm_attach(c, mesh), METART_ERROR_INVALID_ARGUMENT);
  std::string expected =
      "mesh task=" + std::to_string(2 * n) +
      " x data=1 x tensor=1 x pipeline=1 x expert=1 x sequence=1 has " +
      std::to_string(2 * n) + " ranks but the job has " + std::to_string(n) +
      " process" + (n == 1 ? "" : "es");
  EXPECT_NE(std::string(metart_context_last_error(c)).find(expected),
            std::string::npos)
      << metart_context_last_error(c);
  EXPECT_FALSE(metart_comm_attached(c));
  int64_t negative[METART_NUM_AXES] = {-1, 1, 1, 1, 1, 1};
  EXPECT_EQ(metart_comm_attach(c, negative), METART_ERROR_INVALID_ARGUMENT);
}

TEST(Collectives, RejectBadOperands) {
  MeshContext c({metart_world_size(), 1, 1, 1, 1, 1});
  HostTensor x({2, 3}, METART_F32), y({3, 2}, METART_F32),
      z({2, 3}, METART_F64);
  auto rejected = [&](metart_status s, const char *needle) {
    EXPECT_EQ(s, METART_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(metart_context_last_error(c)).find(needle),
              std::string::npos)
        << metart_context_last_error(c);
  };
  rejected(metart_all_reduce(c, &x.t, &y.t, 1, METART_REDUCE_SUM), "y shape");
  rejected(metart_all_reduce(c, &x.t, &z.t, 1, METART_REDUCE_SUM), "f64");
  rejected(metart_all_reduce(c, &x.t, &x.t, 64, METART_REDUCE_SUM),
           "axes mask 64");
  rejected(metart_all_reduce(c, &x.t, &x.t, 1, 7), "unknown reduction 7");
  rejected(metart_all_gather(c, &x.t, &y.t, 1, 2), "dim 2");
  // Four rows split over a group of 1 or 4 ranks.
  HostTensor four({4, 3}, METART_F32), fourF64({4, 3}, METART_F64);
  rejected(metart_all_to_all(c, &four.t, &four.t, 1, 2, 0), "dim 2");
  rejected(metart_all_to_all(c, &four.t, &four.t, 1, 0, -1), "dim -1");
  rejected(metart_all_to_all(c, &four.t, &y.t, 1, 0, 1), "y shape");
  rejected(metart_all_to_all(c, &four.t, &fourF64.t, 1, 0, 1), "f64");
  if (metart_world_size() == 4) {
    // 3 rows do not split over the 4 ranks of the task axis.
    HostTensor rows({3, 2}, METART_F32);
    rejected(metart_all_to_all(c, &rows.t, &rows.t, 1, 0, 1),
             "does not split in 4 along dim 0");
  }
  rejected(metart_broadcast(c, &x.t, &x.t, 1, metart_world_size()), "root");
  rejected(metart_send(c, &x.t, 1, -1), "peer -1");
}

} // namespace
