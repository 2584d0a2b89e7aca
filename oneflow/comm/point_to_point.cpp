#include "oneflow/comm/point_to_point.h"

#include <gloo/context.h>
#include <gloo/transport/unbound_buffer.h>

#include "oneflow/comm/data_plane.h"
#include "oneflow/common/error.h"

namespace oneflow {

PointToPoint::PointToPoint(DataPlane& plane) : plane_(plane) {}

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

void PointToPoint::Send(int64_t peer, int64_t channel, const void* data, int64_t bytes,
                        Done done) {
  Transfer(true, peer, channel, const_cast<void*>(data), bytes, std::move(done));
}

void PointToPoint::Recv(int64_t peer, int64_t channel, void* data, int64_t bytes, Done done) {
  Transfer(false, peer, channel, data, bytes, std::move(done));
}

void PointToPoint::Transfer(bool send, int64_t peer, int64_t channel, void* data, int64_t bytes,
                            Done done) {
  WorkerOf(send, channel).Post([this, send, peer, channel, data, bytes, done = std::move(done)] {
    std::exception_ptr error;
    try {
      std::unique_ptr<gloo::transport::UnboundBuffer> buffer =
          plane_.world()->createUnboundBuffer(data, static_cast<size_t>(bytes));
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (aborted_) { throw Error(ErrorKind::kRuntime) << "the data plane was stopped"; }
        waiting_.insert(buffer.get());
      }
      bool completed = false;
      try {
        if (send) {
          buffer->send(static_cast<int>(peer), static_cast<uint64_t>(channel));
          completed = buffer->waitSend(DataPlane::kTransferTimeout);
        } else {
          buffer->recv(static_cast<int>(peer), static_cast<uint64_t>(channel));
          completed = buffer->waitRecv(DataPlane::kTransferTimeout);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        waiting_.erase(buffer.get());
        throw;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      waiting_.erase(buffer.get());
      if (!completed) { throw Error(ErrorKind::kRuntime) << "the data plane was stopped"; }
    } catch (Error& cause) {
      Error wrapped(cause.kind());
      wrapped << cause.what();
      wrapped.AddContext(std::string(send ? "sending to" : "receiving from") + " machine " +
                         std::to_string(peer) + " on channel " + std::to_string(channel));
      error = std::make_exception_ptr(wrapped);
    } catch (std::exception& cause) {
      error = std::make_exception_ptr(
          Error(ErrorKind::kRuntime) << (send ? "sending to" : "receiving from") << " machine "
                                     << peer << " on channel " << channel
                                     << " failed (did its process stop?): " << cause.what());
    }
    done(error);
  });
}

void PointToPoint::Abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
  for (gloo::transport::UnboundBuffer* buffer : waiting_) {
    buffer->abortWaitSend();
    buffer->abortWaitRecv();
  }
}

}  // namespace oneflow
