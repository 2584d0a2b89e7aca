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

void PointToPoint::Send(int64_t peer, int64_t channel, const void* data, int64_t bytes,
                        Done done) {
  Transfer(true, peer, channel, const_cast<void*>(data), bytes, std::move(done));
}

void PointToPoint::Recv(int64_t peer, int64_t channel, void* data, int64_t bytes, Done done) {
  Transfer(false, peer, channel, data, bytes, std::move(done));
}

bool PointToPoint::IsCancellation(std::exception_ptr error) {
  try {
    if (error) { std::rethrow_exception(error); }
  } catch (TransferCancelled&) {
    return true;
  } catch (...) {
  }
  return false;
}

void PointToPoint::Transfer(bool send, int64_t peer, int64_t channel, void* data, int64_t bytes,
                            Done done) {
  WorkerOf(send, channel).Post([this, send, peer, channel, data, bytes, done = std::move(done)] {
    std::exception_ptr error;
    const std::pair<bool, int64_t> key{send, channel};
    try {
      std::unique_ptr<gloo::transport::UnboundBuffer> buffer =
          plane_.world()->createUnboundBuffer(data, static_cast<size_t>(bytes));
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (aborted_) { throw Error(ErrorKind::kRuntime) << "the data plane was stopped"; }
        if (!send && cancelled_.count(channel)) { throw TransferCancelled(); }
        waiting_[key] = buffer.get();
      }
      bool completed = false;
      const uint64_t slot = slot_base_ | static_cast<uint64_t>(channel);
      try {
        if (send) {
          buffer->send(static_cast<int>(peer), slot);
          completed = buffer->waitSend(DataPlane::kTransferTimeout);
        } else {
          buffer->recv(static_cast<int>(peer), slot);
          completed = buffer->waitRecv(DataPlane::kTransferTimeout);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        waiting_.erase(key);
        throw;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      waiting_.erase(key);
      if (!completed) {
        if (!send && cancelled_.count(channel) && !aborted_) { throw TransferCancelled(); }
        throw Error(ErrorKind::kRuntime) << "the data plane was stopped";
      }
    } catch (TransferCancelled&) {
      error = std::current_exception();
    } catch (Error& cause) {
      Error wrapped(cause.kind());
      wrapped << cause.what();
      wrapped.AddContext(std::string(send ? "sending to" : "receiving from") + " machine " +
                         std::to_string(peer) + " on channel " + std::to_string(channel));
      error = std::make_exception_ptr(wrapped);
    } catch (std::exception& cause) {
      error = std::make_exception_ptr(
          Error(ErrorKind::kPeerLost) << (send ? "sending to" : "receiving from") << " machine "
                                     << peer << " on channel " << channel
                                     << " failed (did its process stop?): " << cause.what());
    }
    done(error);
  });
}

void PointToPoint::CancelRecv(int64_t channel) {
  std::lock_guard<std::mutex> lock(mutex_);
  cancelled_.insert(channel);
  auto it = waiting_.find({false, channel});
  if (it != waiting_.end()) { it->second->abortWaitRecv(); }
}

void PointToPoint::Abort() {
  std::lock_guard<std::mutex> lock(mutex_);
  aborted_ = true;
  for (auto& entry : waiting_) {
    if (entry.first.first) {
      entry.second->abortWaitSend();
    } else {
      entry.second->abortWaitRecv();
    }
  }
}

}  // namespace oneflow
