//===- TcpTransport.cpp - collectives over the TCP world ------------------===//

#include "TcpTransport.h"
#include "../Tensor.h"
#include "Combine.h"
#include "Tcp.h"

#include <cstring>

using namespace metart;
using namespace metart::comm;

namespace {

KernelStatus failed(const std::string &error) {
  return {METART_ERROR_BACKEND, error};
}

} // namespace

TcpTransport::TcpTransport(const Communicator &comm, Backend &backend)
    : backend(backend) {
  for (int mask = 0; mask < kNumMasks; ++mask) {
    position[mask] = static_cast<int>(comm.groupRank[mask]);
    for (int64_t g = 0; g < comm.groupSize[mask]; ++g) {
      // This rank's coordinates, with the group's axes at member g's.
      int64_t coords[METART_NUM_AXES];
      int64_t rest = g;
      for (int axis = METART_NUM_AXES - 1; axis >= 0; --axis) {
        coords[axis] = comm.coords[axis];
        if (mask & (1 << axis)) {
          coords[axis] = rest % comm.mesh[axis];
          rest /= comm.mesh[axis];
        }
      }
      int64_t rank = 0;
      for (int axis = 0; axis < METART_NUM_AXES; ++axis)
        rank = rank * comm.mesh[axis] + coords[axis];
      members[mask].push_back(static_cast<int>(rank));
    }
  }
}

KernelStatus TcpTransport::ringAllReduce(int mask, void *y, int64_t count,
                                         metart_dtype dtype,
                                         Reduction reduction) {
  const std::vector<int> &group = members[mask];
  int64_t n = static_cast<int64_t>(group.size()), me = position[mask];
  size_t element = dtypeSize(dtype);
  int next = group[(me + 1) % n], previous = group[(me + n - 1) % n];
  // Chunk k: elements [k * count / n, (k + 1) * count / n).
  auto first = [&](int64_t k) { return k * count / n; };
  auto size = [&](int64_t k) { return first(k + 1) - first(k); };
  char *data = static_cast<char *>(y);
  scratch.resize(static_cast<size_t>(size(n - 1) + 1) * element);
  std::string error;
  // Reduce-scatter: after n - 1 steps this rank holds chunk me + 1 summed.
  for (int64_t step = 0; step < n - 1; ++step) {
    int64_t out = ((me - step) % n + n) % n, in = ((me - step - 1) % n + n) % n;
    if (!tcp::send(next, data + first(out) * element,
                   static_cast<size_t>(size(out)) * element, error) ||
        !tcp::recv(previous, scratch.data(),
                   static_cast<size_t>(size(in)) * element, error))
      return failed(error);
    combine(dtype, reduction, scratch.data(), data + first(in) * element,
            size(in));
  }
  // All-gather the summed chunks around the ring.
  for (int64_t step = 0; step < n - 1; ++step) {
    int64_t out = ((me + 1 - step) % n + n) % n, in = ((me - step) % n + n) % n;
    if (!tcp::send(next, data + first(out) * element,
                   static_cast<size_t>(size(out)) * element, error) ||
        !tcp::recv(previous, data + first(in) * element,
                   static_cast<size_t>(size(in)) * element, error))
      return failed(error);
  }
  return KernelStatus::ok();
}

KernelStatus TcpTransport::allReduce(int mask, const void *x, void *y,
                                     int64_t count, metart_dtype dtype,
                                     Reduction reduction) {
  const std::vector<int> &group = members[mask];
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  std::string error;
  // Large sums go around a ring (each link carries 2 (n - 1) / n of the
  // data, all at once); small ones through the first rank (fewer
  // messages). Every rank decides alike: same size, same group.
  if (bytes >= kRingBytes && count >= static_cast<int64_t>(group.size())) {
    if (x != y)
      std::memmove(y, x, bytes);
    return ringAllReduce(mask, y, count, dtype, reduction);
  }
  if (position[mask] != 0) {
    if (!tcp::send(group[0], x, bytes, error) ||
        !tcp::recv(group[0], y, bytes, error))
      return failed(error);
    return KernelStatus::ok();
  }
  if (x != y)
    std::memmove(y, x, bytes);
  scratch.resize(bytes);
  for (size_t g = 1; g < group.size(); ++g) {
    if (!tcp::recv(group[g], scratch.data(), bytes, error))
      return failed(error);
    combine(dtype, reduction, scratch.data(), y, count);
  }
  for (size_t g = 1; g < group.size(); ++g)
    if (!tcp::send(group[g], y, bytes, error))
      return failed(error);
  return KernelStatus::ok();
}

KernelStatus TcpTransport::allGather(int mask, const void *x, void *y,
                                     int64_t count, metart_dtype dtype) {
  const std::vector<int> &group = members[mask];
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  int me = position[mask];
  std::string error;
  for (size_t g = 0; g < group.size(); ++g)
    if (static_cast<int>(g) != me && !tcp::send(group[g], x, bytes, error))
      return failed(error);
  char *out = static_cast<char *>(y);
  std::memmove(out + bytes * me, x, bytes);
  for (size_t g = 0; g < group.size(); ++g)
    if (static_cast<int>(g) != me &&
        !tcp::recv(group[g], out + bytes * g, bytes, error))
      return failed(error);
  return KernelStatus::ok();
}

KernelStatus TcpTransport::reduceScatter(int mask, const void *x, void *y,
                                         int64_t count, metart_dtype dtype,
                                         Reduction reduction) {
  const std::vector<int> &group = members[mask];
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  int me = position[mask];
  const char *in = static_cast<const char *>(x);
  std::string error;
  for (size_t g = 0; g < group.size(); ++g)
    if (static_cast<int>(g) != me &&
        !tcp::send(group[g], in + bytes * g, bytes, error))
      return failed(error);
  // This rank's block, reduced in group order.
  std::vector<char> block(bytes);
  scratch.resize(bytes);
  for (size_t g = 0; g < group.size(); ++g) {
    const char *part = in + bytes * me;
    if (static_cast<int>(g) != me) {
      if (!tcp::recv(group[g], scratch.data(), bytes, error))
        return failed(error);
      part = scratch.data();
    }
    if (g == 0)
      std::memcpy(block.data(), part, bytes);
    else
      combine(dtype, reduction, part, block.data(), count);
  }
  std::memcpy(y, block.data(), bytes);
  return KernelStatus::ok();
}

KernelStatus TcpTransport::broadcast(int mask, void *y, int64_t count,
                                     metart_dtype dtype, int root) {
  const std::vector<int> &group = members[mask];
  size_t bytes = static_cast<size_t>(count) * dtypeSize(dtype);
  std::string error;
  if (position[mask] != root)
    return tcp::recv(group[root], y, bytes, error) ? KernelStatus::ok()
                                                   : failed(error);
  for (size_t g = 0; g < group.size(); ++g)
    if (static_cast<int>(g) != root && !tcp::send(group[g], y, bytes, error))
      return failed(error);
  return KernelStatus::ok();
}

KernelStatus TcpTransport::send(int mask, const void *x, int64_t count,
                                metart_dtype dtype, int peer) {
  std::string error;
  return tcp::send(members[mask][peer], x,
                   static_cast<size_t>(count) * dtypeSize(dtype), error)
             ? KernelStatus::ok()
             : failed(error);
}

KernelStatus TcpTransport::recv(int mask, void *y, int64_t count,
                                metart_dtype dtype, int peer) {
  std::string error;
  return tcp::recv(members[mask][peer], y,
                   static_cast<size_t>(count) * dtypeSize(dtype), error)
             ? KernelStatus::ok()
             : failed(error);
}

KernelStatus TcpTransport::barrier(int mask) {
  if (KernelStatus status = backend.synchronize(); status.failed())
    return status;
  int64_t token = 0;
  return allReduce(mask, &token, &token, 1, METART_I64, Reduction::Max);
}

KernelStatus TcpTransport::broadcastHostBytes(int mask, void *data,
                                              size_t bytes, int root) {
  const std::vector<int> &group = members[mask];
  std::string error;
  if (position[mask] != root)
    return tcp::recv(group[root], data, bytes, error) ? KernelStatus::ok()
                                                      : failed(error);
  for (size_t g = 0; g < group.size(); ++g)
    if (static_cast<int>(g) != root && !tcp::send(group[g], data, bytes, error))
      return failed(error);
  return KernelStatus::ok();
}

KernelStatus comm::createTcpTransport(const Communicator &comm,
                                      Backend &backend, bool forBootstrap,
                                      std::unique_ptr<Transport> &out) {
  if (!backend.hostMemory() && !forBootstrap)
    return {METART_ERROR_UNSUPPORTED,
            "a TCP transport moves host memory only (on a GPU, NCCL moves "
            "the data and TCP bootstraps it)"};
  out = std::make_unique<TcpTransport>(comm, backend);
  return KernelStatus::ok();
}
