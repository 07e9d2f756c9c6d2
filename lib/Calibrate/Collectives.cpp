//===- Collectives.cpp - α and β of the runtime's collectives -------------===//
//
// For every group size g that divides the world, the world is laid out as
// task = N/g, data = g and each collective runs over the data axis: all
// N/g groups at once, as they do in a step of a task- and data-parallel
// program. Each size is timed as the slowest rank's median, and
// time = α + bytes / β is fitted over the sizes. Point to point is a
// ping-pong between ranks 2i and 2i+1 (all pairs at once): half a round
// trip per message. The same times are also kept as a table of bus
// bandwidths per size, which follows MPI's changes of protocol (eager to
// rendezvous, cache to memory) that one α–β line cannot.
//
//===----------------------------------------------------------------------===//

#include "Measurements.h"

#include "metac/Calibrate/Calibrate.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace metac::calibrate;
using metac::planner::CollectiveFit;
using metac::planner::LinkLevel;

namespace {

constexpr int32_t kTaskMask = 1 << METART_AXIS_TASK;
constexpr int32_t kDataMask = 1 << METART_AXIS_DATA;

enum class Kind { AllReduce, AllGather, ReduceScatter, Broadcast, SendRecv };

const char *nameOf(Kind kind) {
  switch (kind) {
  case Kind::AllReduce:
    return "all_reduce";
  case Kind::AllGather:
    return "all_gather";
  case Kind::ReduceScatter:
    return "reduce_scatter";
  case Kind::Broadcast:
    return "broadcast";
  case Kind::SendRecv:
    return "send_recv";
  }
  return "";
}

/// Times `kind` over groups of `group` ranks (the axes of `mask`) at every
/// payload size of the plan, and fits α and β.
llvm::Expected<MeasuredFit> measure(Session &session, const Plan &plan,
                                    Kind kind, int64_t group, int32_t mask) {
  metart_context *c = session.context();
  int64_t rank = session.rank();
  // Pairs (2i, 2i+1) exchange; with an odd world the last rank watches.
  int64_t peer = rank ^ 1;
  bool paired = peer < session.size();
  llvm::SmallVector<double> bytes, seconds;
  for (double target : plan.messageBytes) {
    // Elements of each rank's share: the gathered result and the scattered
    // operand are `group` shares.
    int64_t share = std::max<int64_t>(
        1, std::llround(target / 4 /
                        (kind == Kind::AllGather || kind == Kind::ReduceScatter
                             ? group
                             : 1)));
    int64_t whole = kind == Kind::AllGather || kind == Kind::ReduceScatter
                        ? share * group
                        : share;
    bool gathers = kind == Kind::AllGather;
    llvm::Expected<DeviceTensor &> x =
        session.tensor(METART_F32, {gathers ? share : whole}, 1);
    if (!x)
      return x.takeError();
    llvm::Expected<DeviceTensor &> y = session.tensor(
        METART_F32, {kind == Kind::ReduceScatter ? share : whole}, 0);
    if (!y)
      return y.takeError();
    auto call = [&]() -> metart_status {
      switch (kind) {
      case Kind::AllReduce:
        return metart_all_reduce(c, x->get(), y->get(), mask,
                                 METART_REDUCE_SUM);
      case Kind::AllGather:
        return metart_all_gather(c, x->get(), y->get(), mask, 0);
      case Kind::ReduceScatter:
        return metart_reduce_scatter(c, x->get(), y->get(), mask, 0,
                                     METART_REDUCE_SUM);
      case Kind::Broadcast:
        return metart_broadcast(c, x->get(), y->get(), mask, 0);
      case Kind::SendRecv:
        break;
      }
      if (!paired)
        return METART_OK;
      if (rank % 2 == 0) {
        if (metart_status s = metart_send(c, x->get(), mask, peer))
          return s;
        return metart_recv(c, y->get(), mask, peer);
      }
      if (metart_status s = metart_recv(c, y->get(), mask, peer))
        return s;
      return metart_send(c, x->get(), mask, peer);
    };
    llvm::Expected<double> time =
        session.slowestTime(call, nameOf(kind), plan.collective);
    session.releaseTensors();
    if (!time)
      return time.takeError();
    // The runtime's payload (comm.h): the gathered result for all_gather,
    // the operand otherwise; `whole` elements either way.
    bytes.push_back(4.0 * double(whole));
    seconds.push_back(kind == Kind::SendRecv ? *time / 2 : *time);
  }
  MeasuredFit measured;
  measured.fit = fitAlphaBeta(bytes, seconds, &measured.worst);
  measured.fit.collective = nameOf(kind);
  measured.fit.group = kind == Kind::SendRecv ? 2 : group;
  measured.fit.placement = LinkLevel::Node;
  measured.bytes.assign(bytes.begin(), bytes.end());
  measured.seconds.assign(seconds.begin(), seconds.end());
  return measured;
}

} // namespace

llvm::Expected<std::vector<MeasuredFit>>
metac::calibrate::measureCollectives(Session &session, const Plan &plan) {
  std::vector<MeasuredFit> fits;
  int64_t n = session.size();
  if (n < 2)
    return fits;
  auto add = [&](Kind kind, int64_t group, int32_t mask) -> llvm::Error {
    llvm::Expected<MeasuredFit> fit = measure(session, plan, kind, group, mask);
    if (!fit)
      return fit.takeError();
    fits.push_back(*fit);
    return llvm::Error::success();
  };
  for (int64_t group = 2; group <= n; ++group) {
    if (n % group)
      continue;
    if (llvm::Error error = session.attach({n / group, group, 1, 1, 1}))
      return std::move(error);
    for (Kind kind : {Kind::AllReduce, Kind::AllGather, Kind::ReduceScatter,
                      Kind::Broadcast})
      if (llvm::Error error = add(kind, group, kDataMask))
        return std::move(error);
  }
  if (llvm::Error error = session.attach({n, 1, 1, 1, 1}))
    return std::move(error);
  if (llvm::Error error = add(Kind::SendRecv, 2, kTaskMask))
    return std::move(error);
  return fits;
}

metac::planner::CollectiveTable
metac::calibrate::busBandwidthTable(const MeasuredFit &measured) {
  planner::CollectiveTable table;
  table.collective = measured.fit.collective;
  table.group = measured.fit.group;
  table.placement = measured.fit.placement;
  double n = double(table.group);
  double factor = 1;
  if (table.collective == "all_reduce")
    factor = 2 * (n - 1) / n;
  else if (table.collective == "all_gather" ||
           table.collective == "reduce_scatter")
    factor = (n - 1) / n;
  for (size_t i = 0; i < measured.bytes.size(); ++i) {
    // Sizes rounded to whole shares could repeat one: a table's sizes
    // increase.
    if (!table.bytes.empty() && !(measured.bytes[i] > table.bytes.back()))
      continue;
    table.bytes.push_back(measured.bytes[i]);
    table.busBandwidth.push_back(measured.bytes[i] / measured.seconds[i] *
                                 factor);
  }
  return table;
}
