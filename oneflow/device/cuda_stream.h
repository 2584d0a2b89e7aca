#pragma once
// A CUDA stream as a Stream: kernels enqueue work on cuda_stream(); AddCallback records an event
// after that work, and the stream's EventPoller runs the callback (on its own thread) once the
// event has completed. Owned by a CudaDeviceContext; AddCallback is called from the runtime
// thread that owns it, with the stream's GPU current. CUDA builds only.

#ifdef ONEFLOW_WITH_CUDA

#include <cuda_runtime_api.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "oneflow/device/event_poller.h"
#include "oneflow/device/stream.h"

namespace oneflow {

class CudaStream final : public Stream {
 public:
  // Makes `device_id` current on the calling thread and creates a non-blocking stream on it.
  // `on_error` is called once, from the poller thread, when waiting for an event finds a CUDA
  // error or `check_work` throws; the callbacks pending then are dropped. `check_work`, when
  // given, runs on the poller thread each time the work before an event has completed, before
  // that event's callback. Throws Error(kRuntime) on a CUDA failure.
  CudaStream(int64_t device_id, std::function<void(std::exception_ptr)> on_error,
             std::function<void()> check_work = {});
  // Waits until every callback has run (or was dropped), then destroys the events and the
  // stream. Never throws: failures are written to stderr.
  ~CudaStream() override;

  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  // Runs `callback` on the poller thread after all work enqueued on the stream so far.
  // Throws Error(kRuntime) when the event cannot be recorded.
  void AddCallback(std::function<void()> callback) override;

  // Blocks until every callback added so far has run (or was dropped after an error).
  void WaitCallbacks();
  // cudaStreamSynchronize; throws Error(kRuntime) on a CUDA error.
  void Synchronize();

  int64_t device_id() const { return device_id_; }
  cudaStream_t cuda_stream() const { return stream_; }

 private:
  cudaEvent_t TakeEvent();
  void ReturnEvent(cudaEvent_t event);

  int64_t device_id_;
  cudaStream_t stream_ = nullptr;
  std::mutex events_mutex_;  // AddCallback takes events, the poller thread returns them
  std::vector<cudaEvent_t> free_events_;
  std::vector<cudaEvent_t> all_events_;  // every event created, for the destructor
  std::function<void()> check_work_;
  std::unique_ptr<EventPoller> poller_;
};

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
