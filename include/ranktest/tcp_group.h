// A minimal process group for C++ tests run by ranktest with ranks > 1:
// the ranks rendezvous at MASTER_ADDR:MASTER_PORT (rank 0 listens, the
// others connect) and can then sum a value across all ranks or wait for
// each other. Header-only, POSIX sockets, no dependencies: enough for tests
// of the rank launcher and for examples, not a replacement for Gloo or MPI.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ranktest {

inline int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

class TcpGroup {
 public:
  // Blocks until every rank has joined.
  TcpGroup()
      : rank_(env_int("RANK", 0)), size_(env_int("WORLD_SIZE", 1)) {
    if (size_ <= 1) return;
    const char* address = std::getenv("MASTER_ADDR");
    const int port = env_int("MASTER_PORT", 0);
    if (!address || port == 0) throw std::runtime_error("MASTER_ADDR/MASTER_PORT not set");
    sockaddr_in where{};
    where.sin_family = AF_INET;
    where.sin_port = htons(static_cast<uint16_t>(port));
    inet_pton(AF_INET, address, &where.sin_addr);
    if (rank_ == 0) {
      listener_ = socket(AF_INET, SOCK_STREAM, 0);
      const int yes = 1;
      setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      if (bind(listener_, reinterpret_cast<sockaddr*>(&where), sizeof where) != 0)
        throw std::runtime_error("rank 0 cannot listen on MASTER_PORT " +
                                 std::to_string(port) + ": address already in use?");
      listen(listener_, size_);
      peers_.resize(static_cast<std::size_t>(size_), -1);
      for (int joined = 1; joined < size_; ++joined) {
        const int fd = accept(listener_, nullptr, nullptr);
        int peer_rank = 0;
        read_all(fd, &peer_rank, sizeof peer_rank);
        peers_.at(static_cast<std::size_t>(peer_rank)) = fd;
      }
    } else {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      for (;;) {
        root_ = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(root_, reinterpret_cast<sockaddr*>(&where), sizeof where) == 0) break;
        close(root_);
        if (std::chrono::steady_clock::now() > give_up)
          throw std::runtime_error("rank could not reach rank 0");
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      write_all(root_, &rank_, sizeof rank_);
    }
  }

  ~TcpGroup() {
    for (int fd : peers_) if (fd >= 0) close(fd);
    if (root_ >= 0) close(root_);
    if (listener_ >= 0) close(listener_);
  }
  TcpGroup(const TcpGroup&) = delete;
  TcpGroup& operator=(const TcpGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // The sum of `value` over all ranks, on every rank.
  long all_reduce_sum(long value) {
    if (size_ <= 1) return value;
    if (rank_ != 0) {
      write_all(root_, &value, sizeof value);
      read_all(root_, &value, sizeof value);
      return value;
    }
    long total = value;
    for (int peer = 1; peer < size_; ++peer) {
      long part = 0;
      read_all(peers_[static_cast<std::size_t>(peer)], &part, sizeof part);
      total += part;
    }
    for (int peer = 1; peer < size_; ++peer)
      write_all(peers_[static_cast<std::size_t>(peer)], &total, sizeof total);
    return total;
  }

  void barrier() { all_reduce_sum(0); }

 private:
  static void read_all(int fd, void* data, std::size_t size) {
    auto* bytes = static_cast<char*>(data);
    while (size > 0) {
      const ssize_t n = ::read(fd, bytes, size);
      if (n <= 0) throw std::runtime_error("a peer rank closed the connection");
      bytes += n;
      size -= static_cast<std::size_t>(n);
    }
  }
  static void write_all(int fd, const void* data, std::size_t size) {
    const auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::send(fd, bytes, size, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("a peer rank closed the connection");
      bytes += n;
      size -= static_cast<std::size_t>(n);
    }
  }

  int rank_;
  int size_;
  int listener_ = -1;        // rank 0
  std::vector<int> peers_;   // rank 0: a connection to each other rank
  int root_ = -1;            // other ranks: the connection to rank 0
};

}  // namespace ranktest
