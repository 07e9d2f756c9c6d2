//===- AllReduceAlgorithms.h - ring, tree, hierarchical all-reduce *- C++
//-*-===//
//
// All-reduce algorithms on host buffers over MPI point-to-point messages,
// chosen per call (`metart_all_reduce_algorithm`) instead of the MPI
// library's own choice. Each computes every element of the result on one
// rank and sends it to the others, so every rank ends with the same bits.
//
//   ring: reduce-scatter then all-gather around a ring, 2(n-1) steps of
//     count/n elements: each rank sends 2(n-1)/n of the buffer, the
//     bandwidth-optimal schedule (NCCL's ring).
//   tree: binomial-tree reduce to group rank 0, then binomial broadcast:
//     2 log2(n) steps of the whole buffer: fewer, larger messages, the
//     latency-optimal schedule for small buffers.
//   hierarchical: reduce-scatter within a node, all-reduce of each shard
//     across the nodes (rings of the ranks with the same place in their
//     node), all-gather within the node: only 1/(ranks per node) of the
//     buffer crosses between nodes.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_ALLREDUCEALGORITHMS_H
#define METART_SRC_COMM_ALLREDUCEALGORITHMS_H

#include "Combine.h"
#include "Communicator.h"

#include <mpi.h>

#include <vector>

namespace metart::comm {

/// In place on `data` (`count` elements) over `group`; `scratch` is reused
/// between calls.
KernelStatus ringAllReduce(MPI_Comm group, void *data, int64_t count,
                           metart_dtype dtype, Reduction reduction,
                           std::vector<char> &scratch);
/// Reduce-scatter around a ring, in place on `data` (`countPerRank`
/// elements per group rank, in group order): afterwards this rank's block
/// holds the reduction of every rank's block.
KernelStatus ringReduceScatterToRank(MPI_Comm group, void *data,
                                     int64_t countPerRank, metart_dtype dtype,
                                     Reduction reduction,
                                     std::vector<char> &scratch);
KernelStatus treeAllReduce(MPI_Comm group, void *data, int64_t count,
                           metart_dtype dtype, Reduction reduction,
                           std::vector<char> &scratch);
/// `node`: the ranks of `group` on this rank's node; `cross`: the ranks of
/// `group` with this rank's place in their node.
KernelStatus hierarchicalAllReduce(MPI_Comm node, MPI_Comm cross, void *data,
                                   int64_t count, metart_dtype dtype,
                                   Reduction reduction,
                                   std::vector<char> &scratch);

} // namespace metart::comm

#endif // METART_SRC_COMM_ALLREDUCEALGORITHMS_H
