#include "oneflow/comm/point_to_point.h"

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include "oneflow/comm/data_plane.h"
#include "oneflow/common/error.h"

namespace oneflow {

namespace {

struct TransferCancelled : std::exception {
  const char* what() const noexcept override { return "the receive was cancelled"; }
};

}  // namespace

PointToPoint::PointToPoint(DataPlane& plane, int64_t generation)
    : plane_(plane), slot_base_(static_cast<uint64_t>(generation) << 32) {}

PointToPoint::~PointToPoint() {
  std::map<std::pair<bool, int64_t>, std::unique_ptr<SerialWorker>> workers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    workers.swap(workers_);
  }
  workers.clear();  // joins: after Abort() every transfer ends promptly
}

SerialWorker& PointToPoint::WorkerOf(bool send, int64_t channel) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<SerialWorker>& worker = workers_[{send, channel}];
  if (!worker) { worker = std::make_unique<SerialWorker>(); }
  return *worker;
}

void PointToPoint::Send(int64_t peer, int64_t channel, const void* data, int64_t bytes, Done done) {
  Transfer(true, peer, channel, const_cast<void*>(data), bytes, std::move(done));
}

void PointToPoint::Recv(int64_t peer, int64_t channel, void* data, int64_t bytes, Done done) {
  Transfer(false, peer, channel, data, bytes, std::move(done));
}

bool PointToPoint::IsCancellation(std::exception_ptr error) {
  try {
    if (error) { std::rethrow_exception(error); }
  } catch (TransferCancelled&) { return true; } catch (...) {
  }
  return false;
}

void PointToPoint::Transfer(bool send, int64_t peer, int64_t channel, void* data, int64_t bytes,
                            Done done) {
  const std::pair<bool, int64_t> key{send, channel};
  auto describe = [send, peer, channel](Error error) {
    error.AddContext(std::string(send ? "sending to" : "receiving from") + " machine " +
                     std::to_string(peer) + " on channel " + std::to_string(channel));
    return std::make_exception_ptr(error);
  };
  // Posted here, at once (the peer's transfer can proceed without waiting for a worker to wake);
  // waited for on the channel's worker, in posting order.
  std::shared_ptr<gloo::transport::UnboundBuffer> buffer;
  std::exception_ptr error;
  try {
    buffer = plane_.world()->createUnboundBuffer(data, static_cast<size_t>(bytes));
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_) { throw Error(ErrorKind::kRuntime) << "the data plane was stopped"; }
    if (!send && cancelled_.count(channel)) { throw TransferCancelled(); }
    const uint64_t slot = slot_base_ | static_cast<uint64_t>(channel);
    if (send) {
      buffer->send(static_cast<int>(peer), slot);
    } else {
      buffer->recv(static_cast<int>(peer), slot);
    }
    waiting_[key].insert(buffer.get());
  } catch (TransferCancelled&) { error = std::current_exception(); } catch (Error& cause) {
    error = describe(cause);
  } catch (std::exception& cause) {
    error =
        describe(Error(ErrorKind::kPeerLost) << "failed (did its process stop?): " << cause.what());
  }
  WorkerOf(send, channel)
      .Post([this, key, send, buffer, error, describe, done = std::move(done)]() mutable {
        if (!error) {
          try {
            const bool completed = send ? buffer->waitSend(DataPlane::kTransferTimeout)
                                        : buffer->waitRecv(DataPlane::kTransferTimeout);
            std::lock_guard<std::mutex> lock(mutex_);
            if (!completed) {
              if (!send && cancelled_.count(key.second) && !aborted_) { throw TransferCancelled(); }
              throw Error(ErrorKind::kRuntime) << "the data plane was stopped";
            }
          } catch (TransferCancelled&) { error = std::current_exception(); } catch (Error& cause) {
            error = describe(cause);
          } catch (std::exception& cause) {
            error = describe(Error(ErrorKind::kPeerLost)
                             << "failed (did its process stop?): " << cause.what());
          }
          std::lock_guard<std::mutex> lock(mutex_);
          waiting_[key].erase(buffer.get());
        }
        done(error);
      });
}

void PointToPoint::CancelRecv(int64_t channel) {
  std::lock_guard<std::mutex> lock(mutex_);
  cancelled_.insert(channel);
  auto it = waiting_.find({false, channel});
  if (it == waiting_.end()) { return; }
  for (gloo::transport::UnboundBuffer* buffer : it->second) { buffer->abortWaitRecv(); }
}

void PointToPoint::Abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
  for (auto& entry : waiting_) {
    for (gloo::transport::UnboundBuffer* buffer : entry.second) {
      if (entry.first.first) {
        buffer->abortWaitSend();
      } else {
        buffer->abortWaitRecv();
      }
    }
  }
}

}  // namespace oneflow
