//===- Tcp.cpp - a world joined over TCP ----------------------------------===//

#include "Tcp.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

using namespace metart::comm;

namespace {

using Clock = std::chrono::steady_clock;

/// A connection to one peer and the thread that writes to it.
struct Link {
  int fd = -1;
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<std::vector<char>> queue;
  bool closing = false;
  /// Whether the writer is writing a message it took from the queue.
  bool writing = false;
  /// Why writing failed (then nothing more is written), and why reading
  /// did (then nothing more is read).
  std::string failure, broken;
  std::thread writer;
};

std::vector<std::unique_ptr<Link>> links;
int myRank = 0;

const char *variable(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

std::string lastError(const char *what) {
  return std::string(what) + ": " + std::strerror(errno);
}

/// Moves all `bytes` through `transfer` (a send or a recv that may move
/// fewer), retrying when a signal interrupts it; false on an error or the
/// end of the stream.
template <typename Pointer, typename Transfer>
bool transferAll(Pointer data, size_t bytes, Transfer transfer) {
  while (bytes > 0) {
    ssize_t n = transfer(data, bytes);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

bool writeAll(int fd, const char *data, size_t bytes) {
  return transferAll(data, bytes, [fd](const char *at, size_t left) {
    return ::send(fd, at, left, MSG_NOSIGNAL);
  });
}

bool readAll(int fd, char *data, size_t bytes) {
  return transferAll(data, bytes, [fd](char *at, size_t left) {
    return ::recv(fd, at, left, 0);
  });
}

void writerLoop(Link *link, int peer) {
  std::unique_lock<std::mutex> lock(link->mutex);
  while (true) {
    link->ready.wait(lock,
                     [&] { return link->closing || !link->queue.empty(); });
    if (link->queue.empty())
      return;
    std::vector<char> message = std::move(link->queue.front());
    link->queue.pop_front();
    link->writing = true;
    lock.unlock();
    bool ok = writeAll(link->fd, message.data(), message.size());
    lock.lock();
    link->writing = false;
    if (!ok && link->failure.empty())
      link->failure = "rank " + std::to_string(peer) +
                      " closed its connection (" + std::strerror(errno) + ")";
    link->ready.notify_all();
  }
}

/// Writes what the socket takes now without waiting; the bytes written.
size_t writeNow(int fd, const char *data, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    ssize_t n =
        ::send(fd, data + done, bytes - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += static_cast<size_t>(n);
  }
  return done;
}

void tune(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/// A socket listening on `port` (0: any) of every interface.
int listenOn(uint16_t port, int backlog, std::string &error) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = lastError("socket");
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(port);
  if (bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) ||
      listen(fd, backlog)) {
    error =
        lastError(port ? ("listening on port " + std::to_string(port)).c_str()
                       : "listening");
    close(fd);
    return -1;
  }
  return fd;
}

/// Connects to `host`:`port`, retrying until `deadline` (the listener may
/// not be up yet).
int connectTo(const std::string &host, uint16_t port,
              Clock::time_point deadline, std::string &error) {
  addrinfo hints{}, *found = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (int code = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints,
                             &found)) {
    error = "cannot resolve '" + host + "': " + gai_strerror(code);
    return -1;
  }
  while (true) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
      freeaddrinfo(found);
      tune(fd);
      return fd;
    }
    error = lastError(
        ("connecting to " + host + ":" + std::to_string(port)).c_str());
    if (fd >= 0)
      close(fd);
    if (Clock::now() > deadline) {
      freeaddrinfo(found);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

/// Accepts one connection before `deadline`.
int acceptBefore(int listener, Clock::time_point deadline, sockaddr_in &from,
                 std::string &error) {
  while (true) {
    timeval wait{1, 0};
    fd_set set;
    FD_ZERO(&set);
    FD_SET(listener, &set);
    int ready = select(listener + 1, &set, nullptr, nullptr, &wait);
    if (ready > 0) {
      socklen_t length = sizeof(from);
      int fd = accept4(listener, reinterpret_cast<sockaddr *>(&from), &length,
                       SOCK_CLOEXEC);
      if (fd >= 0) {
        tune(fd);
        return fd;
      }
    }
    if (Clock::now() > deadline) {
      error = "the other ranks did not all arrive in time "
              "(METART_RENDEZVOUS_TIMEOUT)";
      return -1;
    }
  }
}

/// Bounds the socket's reads by `deadline`, or (`bounded` false) no more.
void readTimeout(int fd, Clock::time_point deadline, bool bounded) {
  timeval wait{0, 0};
  if (bounded) {
    int64_t left = std::chrono::duration_cast<std::chrono::microseconds>(
                       deadline - Clock::now())
                       .count();
    left = std::max<int64_t>(left, 1000);
    wait.tv_sec = static_cast<time_t>(left / 1000000);
    wait.tv_usec = static_cast<suseconds_t>(left % 1000000);
  }
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
}

/// The first host of a Slurm node list ("node[03-05,7],gpu1" -> node03).
std::string firstNode(const std::string &list) {
  size_t end = list.find_first_of(",[");
  if (end == std::string::npos || list[end] == ',')
    return list.substr(0, end);
  size_t stop = list.find_first_of(",-]", end + 1);
  return list.substr(0, end) + list.substr(end + 1, stop - end - 1);
}

struct Entry {
  uint32_t address; // network order
  uint16_t port;    // host order
};

} // namespace

const char *tcp::launcher() {
  if (variable("RANK") && variable("WORLD_SIZE") && variable("MASTER_ADDR") &&
      variable("MASTER_PORT"))
    return "torchrun";
  if (variable("SLURM_PROCID") && variable("SLURM_STEP_NUM_TASKS"))
    return "srun";
  return nullptr;
}

bool tcp::init(int &rank, int &size, int &localRank, std::string &error) {
  if (!links.empty()) {
    error = "the TCP world was joined already";
    return false;
  }
  std::string master;
  long port = 0;
  localRank = -1;
  if (std::strcmp(launcher(), "torchrun") == 0) {
    rank = std::atoi(variable("RANK"));
    size = std::atoi(variable("WORLD_SIZE"));
    master = variable("MASTER_ADDR");
    port = std::atol(variable("MASTER_PORT"));
    // torchrun's agent holds its own store on MASTER_PORT: the ranks meet
    // on the next port.
    if (variable("TORCHELASTIC_RUN_ID"))
      ++port;
    if (const char *local = variable("LOCAL_RANK"))
      localRank = std::atoi(local);
  } else {
    rank = std::atoi(variable("SLURM_PROCID"));
    size = std::atoi(variable("SLURM_STEP_NUM_TASKS"));
    const char *nodes = variable("SLURM_STEP_NODELIST");
    if (!nodes)
      nodes = variable("SLURM_JOB_NODELIST");
    master = variable("MASTER_ADDR") ? variable("MASTER_ADDR")
             : nodes                 ? firstNode(nodes)
                                     : "localhost";
    // Without MASTER_PORT: a port of the job's step, below Linux's
    // ephemeral range (32768 up), so that two steps on a node differ.
    const char *job = variable("SLURM_JOB_ID");
    const char *step = variable("SLURM_STEP_ID");
    long key = (job ? std::atol(job) : 0) * 16 + (step ? std::atol(step) : 0);
    port = variable("MASTER_PORT") ? std::atol(variable("MASTER_PORT"))
                                   : 20000 + key % 12000;
    if (const char *local = variable("SLURM_LOCALID"))
      localRank = std::atoi(local);
  }
  if (size < 1 || rank < 0 || rank >= size || port <= 0 || port > 65535) {
    error = std::string("the ") + launcher() + " environment gives rank " +
            std::to_string(rank) + " of " + std::to_string(size) +
            " and port " + std::to_string(port) + ": not a valid job";
    return false;
  }
  myRank = rank;
  for (int r = 0; r < size; ++r)
    links.push_back(std::make_unique<Link>());
  if (size == 1)
    return true;
  double seconds = 120;
  if (const char *timeout = variable("METART_RENDEZVOUS_TIMEOUT"))
    seconds = std::atof(timeout);
  auto deadline = Clock::now() + std::chrono::milliseconds(
                                     static_cast<int64_t>(seconds * 1000));
  std::string where = master + ":" + std::to_string(port);
  const char *late = "the other ranks did not all arrive in time "
                     "(METART_RENDEZVOUS_TIMEOUT)";

  // Every rank listens for the ranks above it.
  int listener =
      listenOn(rank == 0 ? static_cast<uint16_t>(port) : 0, size, error);
  if (listener < 0) {
    error = "rank " + std::to_string(rank) + ": " + error;
    return false;
  }
  sockaddr_in own{};
  socklen_t ownLength = sizeof(own);
  getsockname(listener, reinterpret_cast<sockaddr *>(&own), &ownLength);
  std::vector<Entry> table(size);
  auto fail = [&](const std::string &why) {
    error = "rank " + std::to_string(rank) + " meeting the others at " + where +
            ": " + why;
    close(listener);
    for (auto &link : links)
      if (link->fd >= 0) {
        close(link->fd);
        link->fd = -1;
      }
    return false;
  };
  if (rank == 0) {
    table[0] = {0, ntohs(own.sin_port)};
    for (int arrived = 1; arrived < size;) {
      sockaddr_in from{};
      int fd = acceptBefore(listener, deadline, from, error);
      if (fd < 0)
        return fail(error);
      // What does not say in time that it is a rank of this job (a port
      // scan, a process of another job) is dropped.
      readTimeout(fd, deadline, true);
      int32_t hello[3] = {0, 0, 0};
      if (!readAll(fd, reinterpret_cast<char *>(hello), sizeof(hello)) ||
          hello[0] <= 0 || hello[0] >= size || hello[2] != size ||
          links[hello[0]]->fd >= 0) {
        close(fd);
        continue;
      }
      readTimeout(fd, deadline, false);
      links[hello[0]]->fd = fd;
      // A rank on rank 0's host may arrive from a loopback address, which
      // other hosts cannot reach: 0 stands for the master's address.
      uint32_t address = from.sin_addr.s_addr;
      if ((ntohl(address) >> 24) == 127)
        address = 0;
      table[hello[0]] = {address, static_cast<uint16_t>(hello[1])};
      ++arrived;
    }
    for (int r = 1; r < size; ++r)
      if (!writeAll(links[r]->fd, reinterpret_cast<const char *>(table.data()),
                    table.size() * sizeof(Entry)))
        return fail("rank " + std::to_string(r) + " left");
  } else {
    int fd = connectTo(master, static_cast<uint16_t>(port), deadline, error);
    if (fd < 0)
      return fail(error);
    links[0]->fd = fd;
    int32_t hello[3] = {rank, ntohs(own.sin_port), size};
    // The table comes once every rank has arrived.
    readTimeout(fd, deadline, true);
    if (!writeAll(fd, reinterpret_cast<const char *>(hello), sizeof(hello)) ||
        !readAll(fd, reinterpret_cast<char *>(table.data()),
                 table.size() * sizeof(Entry)))
      return fail(Clock::now() > deadline ? late : "rank 0 left");
    readTimeout(fd, deadline, false);
    // The lower ranks but 0: connect to each, saying who this is.
    for (int r = 1; r < rank; ++r) {
      char host[INET_ADDRSTRLEN] = "";
      in_addr address{table[r].address};
      inet_ntop(AF_INET, &address, host, sizeof(host));
      int link = connectTo(table[r].address ? std::string(host) : master,
                           table[r].port, deadline, error);
      int32_t me = rank;
      if (link < 0 ||
          !writeAll(link, reinterpret_cast<const char *>(&me), sizeof(me)))
        return fail("cannot reach rank " + std::to_string(r) + ": " + error);
      links[r]->fd = link;
    }
  }
  // The higher ranks (but for rank 0, which met them all) connect here.
  for (int arrived = rank + 1; rank > 0 && arrived < size;) {
    sockaddr_in from{};
    int fd = acceptBefore(listener, deadline, from, error);
    if (fd < 0)
      return fail(error);
    readTimeout(fd, deadline, true);
    int32_t who = -1;
    if (!readAll(fd, reinterpret_cast<char *>(&who), sizeof(who)) ||
        who <= rank || who >= size || links[who]->fd >= 0) {
      close(fd); // a stranger
      continue;
    }
    readTimeout(fd, deadline, false);
    links[who]->fd = fd;
    ++arrived;
  }
  close(listener);
  for (int r = 0; r < size; ++r)
    if (r != rank)
      links[r]->writer = std::thread(writerLoop, links[r].get(), r);
  return true;
}

bool tcp::send(int peer, const void *data, size_t bytes, std::string &error) {
  Link &link = *links[peer];
  uint64_t length = bytes;
  std::lock_guard<std::mutex> lock(link.mutex);
  if (!link.failure.empty()) {
    error = "lost a peer: " + link.failure;
    return false;
  }
  // With nothing queued, what the socket takes at once goes now (no
  // hand-over to the writer for small messages); the rest is queued, so a
  // send never blocks.
  size_t header = 0, body = 0;
  if (link.queue.empty() && !link.writing) {
    header = writeNow(link.fd, reinterpret_cast<const char *>(&length),
                      sizeof(length));
    if (header == sizeof(length))
      body = writeNow(link.fd, static_cast<const char *>(data), bytes);
    if (header == sizeof(length) && body == bytes)
      return true;
  }
  std::vector<char> rest(sizeof(length) - header + bytes - body);
  std::memcpy(rest.data(), reinterpret_cast<const char *>(&length) + header,
              sizeof(length) - header);
  if (bytes > body)
    std::memcpy(rest.data() + sizeof(length) - header,
                static_cast<const char *>(data) + body, bytes - body);
  link.queue.push_back(std::move(rest));
  link.ready.notify_all();
  return true;
}

bool tcp::recv(int peer, void *data, size_t bytes, std::string &error) {
  Link &link = *links[peer];
  {
    std::lock_guard<std::mutex> lock(link.mutex);
    if (!link.broken.empty()) {
      error = link.broken;
      return false;
    }
  }
  uint64_t length = 0;
  if (!readAll(link.fd, reinterpret_cast<char *>(&length), sizeof(length)) ||
      (length == bytes && bytes &&
       !readAll(link.fd, static_cast<char *>(data), bytes))) {
    error =
        "lost a peer: rank " + std::to_string(peer) + " closed its connection";
  } else if (length != bytes) {
    // The stream no longer lines up with the program: nothing more is
    // read from it.
    error = "rank " + std::to_string(peer) + " sent " + std::to_string(length) +
            " bytes where " + std::to_string(bytes) +
            " were expected (it stopped early, or the ranks run different "
            "programs)";
  } else {
    return true;
  }
  std::lock_guard<std::mutex> lock(link.mutex);
  link.broken = error;
  return false;
}

bool tcp::allGatherWorld(const void *mine, size_t bytes,
                         std::vector<char> &all) {
  int size = static_cast<int>(links.size());
  all.assign(bytes * static_cast<size_t>(size), 0);
  std::memcpy(all.data() + bytes * static_cast<size_t>(myRank), mine, bytes);
  std::string error;
  for (int r = 0; r < size; ++r)
    if (r != myRank && !send(r, mine, bytes, error))
      return false;
  for (int r = 0; r < size; ++r)
    if (r != myRank &&
        !recv(r, all.data() + bytes * static_cast<size_t>(r), bytes, error))
      return false;
  return true;
}

void tcp::barrierWorld() {
  char token = 0;
  std::vector<char> all;
  allGatherWorld(&token, 1, all);
}

void tcp::finalize() {
  for (auto &link : links) {
    {
      // What is queued goes out, unless the peer stopped reading: after a
      // while the socket is shut, which ends the writer's last write.
      std::unique_lock<std::mutex> lock(link->mutex);
      link->closing = true;
      link->ready.notify_all();
      if (!link->ready.wait_for(
              lock, std::chrono::seconds(10),
              [&] { return link->queue.empty() && !link->writing; }) &&
          link->fd >= 0)
        shutdown(link->fd, SHUT_RDWR);
    }
    if (link->writer.joinable())
      link->writer.join();
    if (link->fd >= 0) {
      shutdown(link->fd, SHUT_RDWR);
      close(link->fd);
      link->fd = -1;
    }
  }
}

void tcp::abort(int code) {
  for (auto &link : links)
    if (link->fd >= 0)
      shutdown(link->fd, SHUT_RDWR);
  std::_Exit(code);
}
