#pragma once
// Point-to-point transfers of registers between machines, over the data plane's world context.
// A channel (its id is fixed by the compiler: one per send/recv task pair) carries the pieces of
// one register desc in order. A transfer is posted to Gloo by the caller at once (so the peer's
// side proceeds without waiting for a thread to wake); each channel end has its own SerialWorker
// that waits for its transfers in order, so a transfer waiting for its peer never holds up
// another channel. Asynchronous: Send/Recv return at once and `done` runs on the channel's worker
// when the bytes have left (arrived).
//
// Gloo slots are (generation, channel): a Plan's transfers never match another Plan's, even one
// left posted by a cancelled receive.

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
  // `generation` distinguishes the Plans started on one data plane.
  PointToPoint(DataPlane& plane, int64_t generation);
  // Waits for the transfers in flight (after Abort(), they end at once).
  ~PointToPoint();

  void Send(int64_t peer, int64_t channel, const void* data, int64_t bytes, Done done);
  void Recv(int64_t peer, int64_t channel, void* data, int64_t bytes, Done done);
  // Ends the receives of `channel`: the one waiting and any later ones fail with a cancellation
  // (IsCancellation). For a receive that nothing will be sent to any more.
  void CancelRecv(int64_t channel);
  static bool IsCancellation(std::exception_ptr error);
  // Wakes every transfer waiting for its peer (they fail) and fails the ones not started.
  void Abort();

 private:
  void Transfer(bool send, int64_t peer, int64_t channel, void* data, int64_t bytes, Done done);
  SerialWorker& WorkerOf(bool send, int64_t channel);

  DataPlane& plane_;
  uint64_t slot_base_;
  std::mutex mutex_;
  bool aborted_ = false;
  std::set<int64_t> cancelled_;  // channels whose receives are cancelled
  std::map<std::pair<bool, int64_t>, std::unique_ptr<SerialWorker>> workers_;
  // Transfers posted and not finished, by (send, channel).
  std::map<std::pair<bool, int64_t>, std::set<gloo::transport::UnboundBuffer*>> waiting_;
};

}  // namespace oneflow
