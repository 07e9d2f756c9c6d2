//===- CollectivesTest.cpp - collectives against naive references ---------===//
//
// Each collective over every axes mask of every mesh of the world, in each
// element type, against a reference that the rank computes from its
// group's inputs.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <chrono>
#include <cstdlib>
#include <thread>

using namespace metart::test;

namespace {

// The inputs are small integers, so every sum is exact in each type (bf16
// and f16 too: MPI reduces them with user operations).
const int32_t kDtypes[] = {METART_F32, METART_F64,  METART_I32,
                           METART_I64, METART_BF16, METART_F16};

/// What a test reports on a failure: where it was.
std::string where(const Mesh &mesh, int mask, int32_t dtype) {
  return meshName(mesh) + ", mask " + metart_comm_axes_name(mask) + ", dtype " +
         std::to_string(dtype) + ", rank " +
         std::to_string(metart_world_rank());
}

TEST(Collectives, AllReduceSumAndMaxOverEveryMask) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      for (int32_t dtype : kDtypes)
        for (int32_t reduction : {METART_REDUCE_SUM, METART_REDUCE_MAX}) {
          HostTensor x({3, 5}, dtype), y({3, 5}, dtype);
          x.fillInput(metart_world_rank());
          ASSERT_EQ(metart_all_reduce(c, &x.t, &y.t, mask, reduction),
                    METART_OK)
              << metart_context_last_error(c);
          for (int64_t i = 0; i < x.size(); ++i) {
            double expected = reduction == METART_REDUCE_SUM ? 0 : -1e9;
            for (int64_t r : group)
              expected = reduction == METART_REDUCE_SUM
                             ? expected + inputValue(r, i)
                             : std::max(expected, inputValue(r, i));
            EXPECT_EQ(y.get(i), expected) << where(mesh, mask, dtype);
          }
          // In place: y aliases x.
          ASSERT_EQ(metart_all_reduce(c, &x.t, &x.t, mask, reduction),
                    METART_OK);
          for (int64_t i = 0; i < x.size(); ++i)
            EXPECT_EQ(x.get(i), y.get(i)) << where(mesh, mask, dtype);
        }
    }
  }
}

// Sums large enough for the transports' bandwidth paths (the TCP
// transport's ring from 64 KiB), of counts that do not divide evenly into
// the group's chunks.
TEST(Collectives, AllReduceOfLargeBuffers) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask : {1, 3, 15}) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      for (int32_t dtype : {METART_F32, METART_F64, METART_I64})
        for (int64_t count : {int64_t(40001), int64_t(100003)}) {
          HostTensor x({count}, dtype), y({count}, dtype);
          x.fillInput(metart_world_rank());
          ASSERT_EQ(metart_all_reduce(c, &x.t, &y.t, mask, METART_REDUCE_SUM),
                    METART_OK)
              << metart_context_last_error(c);
          int64_t wrong = 0;
          for (int64_t i = 0; i < count; ++i) {
            double expected = 0;
            for (int64_t r : group)
              expected += inputValue(r, i);
            wrong += y.get(i) != expected;
          }
          EXPECT_EQ(wrong, 0)
              << where(mesh, mask, dtype) << ", " << count << " elements";
        }
    }
  }
}

TEST(Collectives, AllGatherAlongEachDimension) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      int64_t n = group.size();
      for (int32_t dtype : {METART_F32, METART_F64, METART_BF16, METART_F16})
        for (int64_t dim : {0, 1}) {
          HostTensor x({2, 3}, dtype);
          x.fillInput(metart_world_rank());
          HostTensor y({dim == 0 ? 2 * n : 2, dim == 1 ? 3 * n : 3}, dtype);
          ASSERT_EQ(metart_all_gather(c, &x.t, &y.t, mask, dim), METART_OK)
              << metart_context_last_error(c);
          for (int64_t i = 0; i < y.shape[0]; ++i)
            for (int64_t j = 0; j < y.shape[1]; ++j) {
              // Member g's x lands at block g along dim.
              int64_t g = dim == 0 ? i / 2 : j / 3;
              int64_t xi = dim == 0 ? i % 2 : i, xj = dim == 1 ? j % 3 : j;
              EXPECT_EQ(y.get(i * y.shape[1] + j),
                        inputValue(group[g], xi * 3 + xj))
                  << where(mesh, mask, dtype) << ", dim " << dim;
            }
        }
    }
  }
}

TEST(Collectives, AllToAllMovesTheSplitDimension) {
  const int64_t base[3] = {2, 3, 2};
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      int64_t n = group.size(), position = 0, size = 0;
      ASSERT_EQ(metart_comm_group(c, mask, &position, &size), METART_OK);
      for (int32_t dtype : {METART_F32, METART_F64})
        for (auto [split, concat] : {std::pair<int64_t, int64_t>{0, 1},
                                     {1, 0},
                                     {1, 2},
                                     {2, 0},
                                     {1, 1}}) {
          std::vector<int64_t> xs(base, base + 3), ys(base, base + 3);
          xs[split] *= n;
          ys[concat] *= n;
          HostTensor x(xs, dtype), y(ys, dtype);
          x.fillInput(metart_world_rank());
          ASSERT_EQ(metart_all_to_all(c, &x.t, &y.t, mask, split, concat),
                    METART_OK)
              << metart_context_last_error(c);
          for (int64_t i = 0; i < ys[0]; ++i)
            for (int64_t j = 0; j < ys[1]; ++j)
              for (int64_t k = 0; k < ys[2]; ++k) {
                // Block s along concat came from member s: its part
                // `position` along split.
                int64_t at[3] = {i, j, k};
                int64_t sender = at[concat] / base[concat];
                at[concat] %= base[concat];
                at[split] += position * base[split];
                int64_t flat = (at[0] * xs[1] + at[1]) * xs[2] + at[2];
                EXPECT_EQ(y.get((i * ys[1] + j) * ys[2] + k),
                          inputValue(group[sender], flat))
                    << where(mesh, mask, dtype) << ", split " << split
                    << ", concat " << concat;
              }
        }
    }
  }
}

TEST(Collectives, AllSliceTakesThisRanksBlock) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      int64_t n = group.size();
      int64_t position = 0, size = 0;
      ASSERT_EQ(metart_comm_group(c, mask, &position, &size), METART_OK);
      ASSERT_EQ(size, n);
      for (int64_t dim : {0, 1}) {
        HostTensor x({dim == 0 ? 2 * n : 2, dim == 1 ? 3 * n : 3}, METART_F64);
        x.fillInput(0);
        HostTensor y({2, 3}, METART_F64);
        ASSERT_EQ(metart_all_slice(c, &x.t, &y.t, mask, dim), METART_OK)
            << metart_context_last_error(c);
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 3; ++j) {
            int64_t xi = dim == 0 ? position * 2 + i : i;
            int64_t xj = dim == 1 ? position * 3 + j : j;
            EXPECT_EQ(y.get(i * 3 + j), x.get(xi * x.shape[1] + xj))
                << where(mesh, mask, METART_F64) << ", dim " << dim;
          }
      }
    }
  }
}

TEST(Collectives, ReduceScatterAlongEachDimension) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      int64_t n = group.size(), position = 0;
      ASSERT_EQ(metart_comm_group(c, mask, &position, nullptr), METART_OK);
      for (int32_t dtype : {METART_F32, METART_F64})
        for (int64_t dim : {0, 1})
          for (int32_t reduction : {METART_REDUCE_SUM, METART_REDUCE_MAX}) {
            std::vector<int64_t> xShape = {dim == 0 ? 2 * n : 2,
                                           dim == 1 ? 3 * n : 3};
            HostTensor x(xShape, dtype), y({2, 3}, dtype);
            x.fillInput(metart_world_rank());
            ASSERT_EQ(
                metart_reduce_scatter(c, &x.t, &y.t, mask, dim, reduction),
                METART_OK)
                << metart_context_last_error(c);
            for (int64_t i = 0; i < 2; ++i)
              for (int64_t j = 0; j < 3; ++j) {
                int64_t xi = dim == 0 ? position * 2 + i : i;
                int64_t xj = dim == 1 ? position * 3 + j : j;
                int64_t e = xi * xShape[1] + xj;
                double expected = reduction == METART_REDUCE_SUM ? 0 : -1e9;
                for (int64_t r : group)
                  expected = reduction == METART_REDUCE_SUM
                                 ? expected + inputValue(r, e)
                                 : std::max(expected, inputValue(r, e));
                EXPECT_EQ(y.get(i * 3 + j), expected)
                    << where(mesh, mask, dtype) << ", dim " << dim;
              }
          }
    }
  }
}

TEST(Collectives, BroadcastFromEveryRoot) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      for (int32_t dtype : {METART_F32, METART_F64, METART_I64})
        for (int64_t root = 0; root < int64_t(group.size()); ++root) {
          HostTensor x({4}, dtype), y({4}, dtype);
          x.fillInput(metart_world_rank());
          ASSERT_EQ(metart_broadcast(c, &x.t, &y.t, mask, root), METART_OK)
              << metart_context_last_error(c);
          for (int64_t i = 0; i < 4; ++i)
            EXPECT_EQ(y.get(i), inputValue(group[root], i))
                << where(mesh, mask, dtype) << ", root " << root;
        }
    }
  }
}

TEST(Collectives, SendAndReceiveBetweenPairs) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 1; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      int64_t n = group.size(), position = 0;
      if (n % 2)
        continue;
      ASSERT_EQ(metart_comm_group(c, mask, &position, nullptr), METART_OK);
      for (int32_t dtype : {METART_F32, METART_F64}) {
        // Even positions send first, odd ones receive first: pairs (0, 1),
        // (2, 3), ...
        int64_t peer = position ^ 1;
        HostTensor x({6}, dtype), y({6}, dtype);
        x.fillInput(metart_world_rank());
        for (int turn = 0; turn < 2; ++turn) {
          if ((position % 2) == turn)
            ASSERT_EQ(metart_send(c, &x.t, mask, peer), METART_OK)
                << metart_context_last_error(c);
          else
            ASSERT_EQ(metart_recv(c, &y.t, mask, peer), METART_OK)
                << metart_context_last_error(c);
        }
        for (int64_t i = 0; i < 6; ++i)
          EXPECT_EQ(y.get(i), inputValue(group[peer], i))
              << where(mesh, mask, dtype);
      }
    }
  }
}

// A pipeline stage sends to the next stage and goes on to a collective of
// its own group (a stage's expert all-to-all) before the next stage
// receives; that collective must not wait for the send. Messages of 1 MB
// go by rendezvous (MPI's eager limit is a few KB), so waiting deadlocks.
// TCP sends block until received: the transport does not promise this.
TEST(Collectives, SendsToAnotherGroupDoNotHoldUpACollective) {
  if (metart_world_size() != 4)
    GTEST_SKIP() << "needs four ranks";
  if (std::getenv("MASTER_PORT"))
    GTEST_SKIP() << "TCP sends block until received";
  const Mesh mesh = {1, 1, 1, 2, 2, 1};
  const int pipeline = 1 << 3, expert = 1 << 4;
  MeshContext c(mesh);
  int64_t position = 0;
  ASSERT_EQ(metart_comm_group(c, pipeline, &position, nullptr), METART_OK);
  std::vector<int64_t> stages = groupOf(mesh, pipeline);
  std::vector<int64_t> experts = groupOf(mesh, expert);
  const int64_t n = 1 << 17;
  HostTensor out({n}, METART_F64), in({n}, METART_F64);
  out.fillInput(metart_world_rank());
  ASSERT_EQ(metart_send(c, &out.t, pipeline, position ^ 1), METART_OK)
      << metart_context_last_error(c);
  HostTensor x({4}, METART_F64), y({4}, METART_F64);
  x.fillInput(metart_world_rank());
  ASSERT_EQ(metart_all_reduce(c, &x.t, &y.t, expert, METART_REDUCE_SUM),
            METART_OK)
      << metart_context_last_error(c);
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(y.get(i), inputValue(experts[0], i) + inputValue(experts[1], i));
  ASSERT_EQ(metart_recv(c, &in.t, pipeline, position ^ 1), METART_OK)
      << metart_context_last_error(c);
  for (int64_t i = 0; i < n; i += 4099)
    EXPECT_EQ(in.get(i), inputValue(stages[position ^ 1], i));
  // A collective whose group holds the peer completes the send.
  EXPECT_EQ(metart_barrier(c, pipeline), METART_OK);
}

// The next step's scratch reset completes the sends still in flight: the
// sender then reuses the buffer, and the receiver, late, still gets what
// was sent.
TEST(Collectives, AScratchResetCompletesTheSendsInFlight) {
  if (metart_world_size() != 4)
    GTEST_SKIP() << "needs four ranks";
  const Mesh mesh = {1, 1, 1, 2, 2, 1};
  const int pipeline = 1 << 3;
  MeshContext c(mesh);
  int64_t position = 0;
  ASSERT_EQ(metart_comm_group(c, pipeline, &position, nullptr), METART_OK);
  std::vector<int64_t> stages = groupOf(mesh, pipeline);
  const int64_t n = 1 << 17;
  HostTensor buffer({n}, METART_F64);
  if (position == 0) {
    buffer.fillInput(metart_world_rank());
    ASSERT_EQ(metart_send(c, &buffer.t, pipeline, 1), METART_OK)
        << metart_context_last_error(c);
    metart_scratch_reset(c);
    for (int64_t i = 0; i < n; ++i)
      buffer.set(i, -1);
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(metart_recv(c, &buffer.t, pipeline, 0), METART_OK)
        << metart_context_last_error(c);
    for (int64_t i = 0; i < n; i += 4099)
      EXPECT_EQ(buffer.get(i), inputValue(stages[0], i));
  }
  EXPECT_EQ(metart_barrier(c, METART_ALL_AXES), METART_OK);
}

TEST(Collectives, MeshCoordinatesAreRowMajor) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    int64_t gotMesh[METART_NUM_AXES], coords[METART_NUM_AXES];
    ASSERT_EQ(metart_comm_mesh(c, gotMesh, coords), METART_OK);
    std::array<int64_t, METART_NUM_AXES> expected =
        coordsOf(mesh, metart_world_rank());
    for (int axis = 0; axis < METART_NUM_AXES; ++axis) {
      EXPECT_EQ(gotMesh[axis], mesh[axis]);
      EXPECT_EQ(coords[axis], expected[axis]);
    }
    EXPECT_EQ(metart_barrier(c, METART_ALL_AXES), METART_OK);
  }
}

} // namespace
