//===- AllReduceAlgorithms.cpp - ring, tree, hierarchical all-reduce ------===//

#include "AllReduceAlgorithms.h"
#include "../Precision.h"
#include "../Tensor.h"

#include <climits>
#include <cstring>

using namespace metart;
using namespace metart::comm;

namespace {

constexpr int kTag = 7301; // apart from the pipeline's send/recv tags

KernelStatus mpiFailed(int code, const char *call) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(code, text, &length);
  return {METART_ERROR_BACKEND, std::string(call) + " failed: " + text};
}

/// Sends `sendBytes` at `send` to `to` while receiving `recvBytes` into
/// `recv` from `from`.
KernelStatus exchange(MPI_Comm group, const char *send, int64_t sendBytes,
                      int to, char *recv, int64_t recvBytes, int from) {
  if (sendBytes > INT_MAX || recvBytes > INT_MAX)
    return {METART_ERROR_UNSUPPORTED,
            "more than 2^31 - 1 bytes in one MPI message"};
  int code = MPI_Sendrecv(send, int(sendBytes), MPI_BYTE, to, kTag, recv,
                          int(recvBytes), MPI_BYTE, from, kTag, group,
                          MPI_STATUS_IGNORE);
  return code == MPI_SUCCESS ? KernelStatus::ok()
                             : mpiFailed(code, "MPI_Sendrecv");
}

/// The blocks a ring cuts `count` elements into: `size` of them, the first
/// `count % size` one element longer.
struct Blocks {
  int64_t count, size, elementBytes;
  int64_t begin(int64_t i) const {
    int64_t base = count / size, extra = count % size;
    return i * base + std::min(i, extra);
  }
  int64_t length(int64_t i) const {
    return count / size + (i < count % size ? 1 : 0);
  }
  int64_t offsetBytes(int64_t i) const { return begin(i) * elementBytes; }
  int64_t bytes(int64_t i) const { return length(i) * elementBytes; }
};

int64_t modulo(int64_t a, int64_t n) { return ((a % n) + n) % n; }

/// Every rank checks the largest message before the first one, so that all
/// fail together instead of some waiting for a peer that gave up.
KernelStatus checkLargest(const Blocks &b) {
  if (b.bytes(0) <= INT_MAX)
    return KernelStatus::ok();
  return {METART_ERROR_UNSUPPORTED,
          "more than 2^31 - 1 bytes in one MPI message"};
}

/// After it, this rank holds the reduction of block (rank + 1 + shift) mod
/// size.
KernelStatus ringReduceScatter(MPI_Comm group, char *data, const Blocks &b,
                               metart_dtype dtype, Reduction reduction,
                               std::vector<char> &scratch, int shift = 0) {
  int rank = 0, size = 1;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  scratch.resize(b.bytes(0));
  for (int step = 0; step < size - 1; ++step) {
    int64_t out = modulo(rank - step + shift, size),
            in = modulo(rank - step - 1 + shift, size);
    if (KernelStatus s =
            exchange(group, data + b.offsetBytes(out), b.bytes(out), right,
                     scratch.data(), b.bytes(in), left);
        s.failed())
      return s;
    combine(dtype, reduction, scratch.data(), data + b.offsetBytes(in),
            b.length(in));
  }
  return KernelStatus::ok();
}

/// Starting from each rank's block (rank + 1) mod size, every rank ends with
/// every block.
KernelStatus ringAllGather(MPI_Comm group, char *data, const Blocks &b) {
  int rank = 0, size = 1;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int step = 0; step < size - 1; ++step) {
    int64_t out = modulo(rank + 1 - step, size), in = modulo(rank - step, size);
    if (KernelStatus s =
            exchange(group, data + b.offsetBytes(out), b.bytes(out), right,
                     data + b.offsetBytes(in), b.bytes(in), left);
        s.failed())
      return s;
  }
  return KernelStatus::ok();
}

} // namespace

KernelStatus metart::comm::ringAllReduce(MPI_Comm group, void *data,
                                         int64_t count, metart_dtype dtype,
                                         Reduction reduction,
                                         std::vector<char> &scratch) {
  int size = 1;
  MPI_Comm_size(group, &size);
  Blocks blocks{count, size, static_cast<int64_t>(dtypeSize(dtype))};
  char *bytes = static_cast<char *>(data);
  if (KernelStatus s = checkLargest(blocks); s.failed())
    return s;
  if (KernelStatus s =
          ringReduceScatter(group, bytes, blocks, dtype, reduction, scratch);
      s.failed())
    return s;
  return ringAllGather(group, bytes, blocks);
}

KernelStatus metart::comm::ringReduceScatterToRank(MPI_Comm group, void *data,
                                                   int64_t countPerRank,
                                                   metart_dtype dtype,
                                                   Reduction reduction,
                                                   std::vector<char> &scratch) {
  int size = 1;
  MPI_Comm_size(group, &size);
  Blocks blocks{countPerRank * size, size,
                static_cast<int64_t>(dtypeSize(dtype))};
  if (KernelStatus s = checkLargest(blocks); s.failed())
    return s;
  return ringReduceScatter(group, static_cast<char *>(data), blocks, dtype,
                           reduction, scratch, /*shift=*/-1);
}

KernelStatus metart::comm::treeAllReduce(MPI_Comm group, void *data,
                                         int64_t count, metart_dtype dtype,
                                         Reduction reduction,
                                         std::vector<char> &scratch) {
  int rank = 0, size = 1;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &size);
  int64_t bytes = count * static_cast<int64_t>(dtypeSize(dtype));
  if (bytes > INT_MAX)
    return {METART_ERROR_UNSUPPORTED,
            "more than 2^31 - 1 bytes in one MPI message"};
  scratch.resize(bytes);
  // Reduce: at distance d, a rank with bit d set sends its partial sum to
  // the rank d below and leaves; the others add what arrives.
  int distance = 1;
  for (; distance < size; distance <<= 1) {
    if (rank & distance) {
      int code =
          MPI_Send(data, int(bytes), MPI_BYTE, rank - distance, kTag, group);
      if (code != MPI_SUCCESS)
        return mpiFailed(code, "MPI_Send");
      break;
    }
    if (rank + distance < size) {
      int code = MPI_Recv(scratch.data(), int(bytes), MPI_BYTE, rank + distance,
                          kTag, group, MPI_STATUS_IGNORE);
      if (code != MPI_SUCCESS)
        return mpiFailed(code, "MPI_Recv");
      combine(dtype, reduction, scratch.data(), data, count);
    }
  }
  // Broadcast the root's result back down the same tree: a rank receives
  // from the parent it sent to, then sends to the children it received from.
  if (rank != 0) {
    int code = MPI_Recv(data, int(bytes), MPI_BYTE, rank - distance, kTag,
                        group, MPI_STATUS_IGNORE);
    if (code != MPI_SUCCESS)
      return mpiFailed(code, "MPI_Recv");
  }
  for (distance >>= 1; distance > 0; distance >>= 1)
    if (rank + distance < size) {
      int code =
          MPI_Send(data, int(bytes), MPI_BYTE, rank + distance, kTag, group);
      if (code != MPI_SUCCESS)
        return mpiFailed(code, "MPI_Send");
    }
  return KernelStatus::ok();
}

KernelStatus metart::comm::hierarchicalAllReduce(MPI_Comm node, MPI_Comm cross,
                                                 void *data, int64_t count,
                                                 metart_dtype dtype,
                                                 Reduction reduction,
                                                 std::vector<char> &scratch) {
  int nodeSize = 1, crossSize = 1, nodeRank = 0;
  MPI_Comm_size(node, &nodeSize);
  MPI_Comm_size(cross, &crossSize);
  MPI_Comm_rank(node, &nodeRank);
  Blocks blocks{count, nodeSize, static_cast<int64_t>(dtypeSize(dtype))};
  char *bytes = static_cast<char *>(data);
  // The node's blocks bound every message, the cross rings' included.
  if (KernelStatus s = checkLargest(blocks); s.failed())
    return s;
  if (nodeSize > 1)
    if (KernelStatus s =
            ringReduceScatter(node, bytes, blocks, dtype, reduction, scratch);
        s.failed())
      return s;
  // The block this rank now holds, reduced within the node, is reduced
  // across the nodes by the ranks that hold the same block.
  if (crossSize > 1) {
    int64_t mine = (nodeRank + 1) % nodeSize;
    if (KernelStatus s =
            ringAllReduce(cross, bytes + blocks.offsetBytes(mine),
                          blocks.length(mine), dtype, reduction, scratch);
        s.failed())
      return s;
  }
  if (nodeSize > 1)
    return ringAllGather(node, bytes, blocks);
  return KernelStatus::ok();
}
