//===- AllReduceAlgorithmsTest.cpp - ring, tree, hierarchical all-reduce --===//
//
// Every algorithm of metart_all_reduce_algorithm over every axes mask of
// every mesh of the world, in each element type, for lengths shorter than
// the group, not divisible by it, and long: the exact sums and maxima of
// small integers, and the same bits on every rank of the group for sums
// that round. Hierarchical runs with two ranks per node
// (METART_RANKS_PER_NODE), so a group of four has two nodes.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <cstdlib>
#include <cstring>

using namespace metart::test;

namespace {

const int32_t kDtypes[] = {METART_F32, METART_F64,  METART_I32,
                           METART_I64, METART_BF16, METART_F16};
const int32_t kAlgorithms[] = {METART_ALLREDUCE_RING, METART_ALLREDUCE_TREE,
                               METART_ALLREDUCE_HIERARCHICAL};
const int64_t kLengths[] = {1, 3, 15, 1001};

std::string where(const Mesh &mesh, int mask, int32_t algorithm, int32_t dtype,
                  int64_t length) {
  return meshName(mesh) + ", mask " + metart_comm_axes_name(mask) +
         ", algorithm " + std::to_string(algorithm) + ", dtype " +
         std::to_string(dtype) + ", length " + std::to_string(length) +
         ", rank " + std::to_string(metart_world_rank());
}

TEST(AllReduceAlgorithms, ExactOnEveryMaskTypeAndLength) {
  setenv("METART_RANKS_PER_NODE", "2", 1);
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      for (int32_t algorithm : kAlgorithms)
        for (int32_t dtype : kDtypes)
          for (int64_t length : kLengths)
            for (int32_t reduction : {METART_REDUCE_SUM, METART_REDUCE_MAX}) {
              HostTensor x({length}, dtype), y({length}, dtype);
              x.fillInput(metart_world_rank());
              ASSERT_EQ(metart_all_reduce_algorithm(
                            c, &x.t, &y.t, mask, reduction, algorithm, dtype),
                        METART_OK)
                  << metart_context_last_error(c);
              for (int64_t i = 0; i < length; ++i) {
                double expected = reduction == METART_REDUCE_SUM ? 0 : -1e9;
                for (int64_t r : group)
                  expected = reduction == METART_REDUCE_SUM
                                 ? expected + inputValue(r, i)
                                 : std::max(expected, inputValue(r, i));
                EXPECT_EQ(y.get(i), expected)
                    << where(mesh, mask, algorithm, dtype, length);
              }
              // In place.
              ASSERT_EQ(metart_all_reduce_algorithm(
                            c, &x.t, &x.t, mask, reduction, algorithm, dtype),
                        METART_OK);
              EXPECT_EQ(0, std::memcmp(x.bytes.data(), y.bytes.data(),
                                       y.bytes.size()))
                  << where(mesh, mask, algorithm, dtype, length);
            }
    }
  }
}

TEST(AllReduceAlgorithms, EveryRankGetsTheSameBits) {
  setenv("METART_RANKS_PER_NODE", "2", 1);
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 1; mask < (1 << METART_NUM_AXES); ++mask) {
      int64_t size = static_cast<int64_t>(groupOf(mesh, mask).size());
      for (int32_t algorithm : kAlgorithms) {
        // Sums of thirds round differently in different orders.
        const int64_t length = 257;
        HostTensor x({length}, METART_F32),
            gathered({size * length}, METART_F32);
        for (int64_t i = 0; i < length; ++i)
          x.set(i, (metart_world_rank() + 1) / 3.0 + i / 7.0);
        ASSERT_EQ(metart_all_reduce_algorithm(c, &x.t, &x.t, mask,
                                              METART_REDUCE_SUM, algorithm,
                                              METART_F32),
                  METART_OK);
        ASSERT_EQ(metart_all_gather(c, &x.t, &gathered.t, mask, 0), METART_OK);
        for (int64_t r = 1; r < size; ++r)
          EXPECT_EQ(0, std::memcmp(gathered.bytes.data(),
                                   gathered.bytes.data() + r * length * 4,
                                   length * 4))
              << where(mesh, mask, algorithm, METART_F32, length)
              << ": group rank " << r << " differs from group rank 0";
      }
    }
  }
}

TEST(AllReduceAlgorithms, CompressedSumsRoundOnTheWire) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      for (int32_t algorithm : {METART_ALLREDUCE_LIBRARY, METART_ALLREDUCE_RING,
                                METART_ALLREDUCE_TREE})
        for (int32_t wire : {METART_BF16, METART_F16})
          for (int32_t dtype : {METART_F32, METART_F64}) {
            // Small integers are exact in bf16 and f16: the sums too.
            const int64_t length = 37;
            HostTensor x({length}, dtype), y({length}, dtype);
            x.fillInput(metart_world_rank());
            ASSERT_EQ(metart_all_reduce_algorithm(c, &x.t, &y.t, mask,
                                                  METART_REDUCE_SUM, algorithm,
                                                  wire),
                      METART_OK)
                << metart_context_last_error(c);
            for (int64_t i = 0; i < length; ++i) {
              double expected = 0;
              for (int64_t r : group)
                expected += inputValue(r, i);
              EXPECT_EQ(y.get(i), expected)
                  << where(mesh, mask, algorithm, dtype, length);
            }
            // A value bf16 cannot hold comes back rounded: 1 + 2^-10 is
            // 1 in bf16 (8 bits of mantissa) and exact in f16 (11 bits). A
            // group of one sends nothing, so rounds nothing.
            for (int64_t i = 0; i < length; ++i)
              x.set(i, 1.0 + 1.0 / 1024);
            ASSERT_EQ(metart_all_reduce_algorithm(c, &x.t, &y.t, mask,
                                                  METART_REDUCE_MAX, algorithm,
                                                  wire),
                      METART_OK);
            bool rounded = wire == METART_BF16 && group.size() > 1;
            EXPECT_EQ(y.get(0), rounded ? 1.0 : 1.0 + 1.0 / 1024)
                << where(mesh, mask, algorithm, dtype, length);
          }
    }
  }
}

TEST(AllReduceAlgorithms, CompressedBytesAreCounted) {
  // Over the whole world; a group of one moves nothing.
  MeshContext c(Mesh{metart_world_size(), 1, 1, 1, 1, 1});
  HostTensor x({64}, METART_F32);
  int64_t perElement[2] = {4, 2};
  int32_t wires[2] = {METART_F32, METART_BF16};
  for (int k = 0; k < 2; ++k) {
    metart_comm_stats before, after;
    metart_comm_stats_get(c, 1, &before);
    ASSERT_EQ(metart_all_reduce_algorithm(c, &x.t, &x.t, 1, METART_REDUCE_SUM,
                                          METART_ALLREDUCE_RING, wires[k]),
              METART_OK);
    metart_comm_stats_get(c, 1, &after);
    EXPECT_EQ(after.calls - before.calls, 1);
    EXPECT_EQ(after.bytes - before.bytes,
              metart_world_size() > 1 ? 64 * perElement[k] : 0);
  }
}

TEST(AllReduceAlgorithms, RejectsWhatItCannotCompress) {
  Context c;
  HostTensor i({4}, METART_I32), f({4}, METART_F32);
  EXPECT_EQ(metart_all_reduce_algorithm(c, &i.t, &i.t, 1, METART_REDUCE_SUM,
                                        METART_ALLREDUCE_RING, METART_BF16),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(c))
                .find("compresses f32 or f64 into bf16 or f16 only"),
            std::string::npos)
      << metart_context_last_error(c);
  EXPECT_EQ(metart_all_reduce_algorithm(c, &f.t, &f.t, 1, METART_REDUCE_SUM,
                                        METART_ALLREDUCE_RING, METART_I32),
            METART_ERROR_INVALID_ARGUMENT);
}

TEST(AllReduceAlgorithms, RingReduceScatterAlongEachDimension) {
  for (const Mesh &mesh : meshesOfWorld()) {
    MeshContext c(mesh);
    for (int mask = 0; mask < (1 << METART_NUM_AXES); ++mask) {
      std::vector<int64_t> group = groupOf(mesh, mask);
      int64_t n = group.size(), position = 0;
      ASSERT_EQ(metart_comm_group(c, mask, &position, nullptr), METART_OK);
      for (int32_t dtype : {METART_F32, METART_F64, METART_I64, METART_BF16})
        for (int64_t dim : {0, 1})
          for (int32_t reduction : {METART_REDUCE_SUM, METART_REDUCE_MAX}) {
            std::vector<int64_t> xShape = {dim == 0 ? 2 * n : 2,
                                           dim == 1 ? 3 * n : 3};
            HostTensor x(xShape, dtype), y({2, 3}, dtype);
            x.fillInput(metart_world_rank());
            ASSERT_EQ(metart_reduce_scatter_algorithm(c, &x.t, &y.t, mask, dim,
                                                      reduction,
                                                      METART_ALLREDUCE_RING),
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
                    << meshName(mesh) << ", mask " << mask << ", dtype "
                    << dtype << ", dim " << dim;
              }
          }
    }
  }
}

TEST(AllReduceAlgorithms, RejectsAnUnknownAlgorithm) {
  Context c;
  HostTensor x({4}, METART_F32), part({4}, METART_F32);
  EXPECT_EQ(metart_reduce_scatter_algorithm(c, &x.t, &part.t, 1, 0,
                                            METART_REDUCE_SUM, 9),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(c))
                .find("unknown reduce-scatter algorithm 9"),
            std::string::npos)
      << metart_context_last_error(c);
  EXPECT_EQ(metart_all_reduce_algorithm(c, &x.t, &x.t, 1, METART_REDUCE_SUM, 7,
                                        METART_F32),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(metart_context_last_error(c))
                .find("unknown all-reduce algorithm 7"),
            std::string::npos)
      << metart_context_last_error(c);
}

} // namespace
