#pragma once
// Point-to-point transfers of registers between machines, over the data plane's world context.
// A channel (its id is fixed by the compiler: one per send/recv task pair) carries the pieces of
// one register desc in order; each channel end has its own SerialWorker, so a transfer waiting
// for its peer never holds up another channel. Asynchronous: Send/Recv return at once and `done`
// runs on the channel's worker when the bytes have left (arrived).

#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "oneflow/comm/serial_worker.h"

namespace gloo::transport {
class UnboundBuffer;
}

namespace oneflow {

class DataPlane;

class PointToPoint {
 public:
  using Done = std::function<void(std::exception_ptr error)>;
  explicit PointToPoint(DataPlane& plane);
  // Waits for the transfers in flight (after Abort(), they end at once).
  ~PointToPoint();

  void Send(int64_t peer, int64_t channel, const void* data, int64_t bytes, Done done);
  void Recv(int64_t peer, int64_t channel, void* data, int64_t bytes, Done done);
  // Wakes every transfer waiting for its peer (they fail) and fails the ones not started.
  void Abort();

 private:
  void Transfer(bool send, int64_t peer, int64_t channel, void* data, int64_t bytes, Done done);
  SerialWorker& WorkerOf(bool send, int64_t channel);

  DataPlane& plane_;
  std::mutex mutex_;
  bool aborted_ = false;
  std::map<std::pair<bool, int64_t>, std::unique_ptr<SerialWorker>> workers_;
  std::set<gloo::transport::UnboundBuffer*> waiting_;  // transfers being waited for
};

}  // namespace oneflow
