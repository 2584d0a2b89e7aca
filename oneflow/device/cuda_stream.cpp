#ifdef ONEFLOW_WITH_CUDA

#include "oneflow/device/cuda_stream.h"

#include <cstdio>
#include <utility>

#include "oneflow/device/cuda_check.h"

namespace oneflow {

namespace {

// For destructors, which must not throw.
void LogCudaFailure(const char* what, int64_t device_id, cudaError_t status) {
  // At process exit the runtime may be unloaded before a static owner is destroyed: nothing to
  // free any more, and nothing worth reporting.
  if (status == cudaSuccess || status == cudaErrorCudartUnloading) { return; }
  std::fprintf(stderr, "oneflow: %s on gpu %lld failed: %s\n", what,
               static_cast<long long>(device_id), cudaGetErrorString(status));
}

}  // namespace

CudaStream::CudaStream(int64_t device_id, std::function<void(std::exception_ptr)> on_error,
                       std::function<void()> check_work)
    : device_id_(device_id), check_work_(std::move(check_work)) {
  OF_CUDA_CHECK(cudaSetDevice(static_cast<int>(device_id)));
  OF_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  // The poller thread queries this GPU's events, so the GPU must be current there too.
  const int device = static_cast<int>(device_id);
  try {
    poller_ = std::make_unique<EventPoller>(std::move(on_error),
                                            [device] { OF_CUDA_CHECK(cudaSetDevice(device)); });
  } catch (...) {
    cudaStreamDestroy(stream_);  // the destructor does not run for a constructor that throws
    throw;
  }
}

CudaStream::~CudaStream() {
  // The poller's destructor waits for every pending callback, so no event is in use after it.
  try {
    poller_.reset();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oneflow: stopping the event poller of gpu %lld failed: %s\n",
                 static_cast<long long>(device_id_), e.what());
  }
  // This may run on another thread than the one that created the stream.
  LogCudaFailure("cudaSetDevice", device_id_, cudaSetDevice(static_cast<int>(device_id_)));
  for (cudaEvent_t event : all_events_) {
    LogCudaFailure("cudaEventDestroy", device_id_, cudaEventDestroy(event));
  }
  if (stream_ != nullptr) {
    LogCudaFailure("cudaStreamDestroy", device_id_, cudaStreamDestroy(stream_));
  }
}

cudaEvent_t CudaStream::TakeEvent() {
  {
    std::lock_guard<std::mutex> lock(events_mutex_);
    if (!free_events_.empty()) {
      cudaEvent_t event = free_events_.back();
      free_events_.pop_back();
      return event;
    }
  }
  // The pool grows to the number of callbacks in flight, then stays that size. Events belong to
  // the device current when they are created: make sure it is this stream's.
  cudaEvent_t event = nullptr;
  OF_CUDA_CHECK(cudaSetDevice(static_cast<int>(device_id_)));
  OF_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  std::lock_guard<std::mutex> lock(events_mutex_);
  all_events_.push_back(event);
  return event;
}

void CudaStream::ReturnEvent(cudaEvent_t event) {
  std::lock_guard<std::mutex> lock(events_mutex_);
  free_events_.push_back(event);
}

void CudaStream::AddCallback(std::function<void()> callback) {
  cudaEvent_t event = TakeEvent();
  const cudaError_t status = cudaEventRecord(event, stream_);
  if (status != cudaSuccess) {
    ReturnEvent(event);
    throw Error(ErrorKind::kRuntime) << "cudaEventRecord on the stream of gpu " << device_id_
                                     << " failed: " << cudaGetErrorString(status);
  }
  const int64_t device_id = device_id_;
  poller_->Add(
      [this, event, device_id] {
        const cudaError_t query = cudaEventQuery(event);
        if (query == cudaSuccess) {
          if (check_work_) { check_work_(); }
          return true;
        }
        if (query == cudaErrorNotReady) { return false; }
        // An error of work before the event (e.g. a kernel's illegal address), seen here first.
        throw Error(ErrorKind::kRuntime)
            << "waiting for the stream of gpu " << device_id
            << " failed: " << cudaGetErrorString(query) << " (a kernel or copy enqueued before "
            << "this point failed; CUDA_LAUNCH_BLOCKING=1 shows which)";
      },
      [this, event, callback = std::move(callback)] {
        // Reusable at once: the event has completed, and a later record replaces it.
        ReturnEvent(event);
        callback();
      });
}

void CudaStream::WaitCallbacks() { poller_->WaitIdle(); }

void CudaStream::Synchronize() { OF_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

}  // namespace oneflow

#endif  // ONEFLOW_WITH_CUDA
