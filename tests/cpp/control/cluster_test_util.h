#pragma once
// Helpers for control-plane tests: a whole cluster runs in one process, one thread per rank.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "oneflow/control/control_plane.h"

namespace oneflow {
namespace testing {

// A TCP socket bound to 127.0.0.1 on a port the kernel picked; closes on destruction.
class BoundSocket {
 public:
  explicit BoundSocket(bool listen_on_it = false) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof(address);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
        (listen_on_it && listen(fd_, 1) != 0)) {
      throw std::runtime_error("cannot bind a test socket on 127.0.0.1");
    }
    port_ = ntohs(address.sin_port);
  }
  ~BoundSocket() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A port that was free a moment ago (nothing listens on it).
inline int FreePort() { return BoundSocket().port(); }

// Short timeouts, so failures show within a second or two.
inline ClusterSpec TestSpec(int64_t rank, int64_t world_size, int port) {
  ClusterSpec spec;
  spec.rank = rank;
  spec.world_size = world_size;
  spec.master_addr = "127.0.0.1";
  spec.master_port = port;
  spec.rendezvous_timeout = std::chrono::milliseconds(5000);
  spec.heartbeat_interval = std::chrono::milliseconds(50);
  spec.heartbeat_timeout = std::chrono::milliseconds(2000);
  return spec;
}

// Runs body(rank) for every rank on its own thread; returns each rank's exception (null if none).
inline std::vector<std::exception_ptr> RunOnThreads(int64_t count,
                                                    const std::function<void(int64_t)>& body) {
  std::vector<std::exception_ptr> errors(count);
  std::vector<std::thread> threads;
  for (int64_t rank = 0; rank < count; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        body(rank);
      } catch (...) { errors[rank] = std::current_exception(); }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return errors;
}

// The message of an exception, or "" for none.
inline std::string MessageOf(const std::exception_ptr& error) {
  if (!error) return "";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& caught) { return caught.what(); } catch (...) {
    return "unknown exception";
  }
}

}  // namespace testing
}  // namespace oneflow
