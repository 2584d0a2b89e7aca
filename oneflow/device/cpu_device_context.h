#pragma once
// A CPU device: an inline stream plus the device's compute pool. ParallelFor splits large loops
// over the device's `compute_threads` threads (the owning runtime thread included); BLAS calls
// made from the owning thread use the same number of threads.
//
// One context per runtime thread: ParallelFor is called only from the owning thread, never
// concurrently. An exception thrown by any chunk is rethrown by ParallelFor on the calling thread
// once every chunk has returned, so no worker is left holding the caller's functor.

#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "oneflow/device/device_context.h"

namespace oneflow {

class CpuDeviceContext : public DeviceContext {
 public:
  explicit CpuDeviceContext(int64_t compute_threads);
  ~CpuDeviceContext() override;

  const std::string& device_tag() const override;
  Stream& stream() override { return stream_; }
  // Sets how many threads BLAS and oneDNN may use from the calling thread (OpenMP keeps that
  // setting per calling thread).
  void BindCurrentThread() override;
  int64_t compute_threads() const { return compute_threads_; }

  // Runs fn(begin, end) over [0, count) in chunks of at least `grain` elements, in parallel on
  // the compute threads; returns when all chunks are done.
  virtual void ParallelFor(int64_t count, int64_t grain,
                           const std::function<void(int64_t, int64_t)>& fn);

  // A 64-byte aligned buffer of at least `bytes` for one kernel's temporaries during one act
  // (e.g. oneDNN's scratchpads and reordered arguments). The kernels of a runtime thread run one
  // at a time, so they all share this one buffer instead of each holding its own: its size is
  // the largest single need, not their sum. It only grows (dropping what it held); its contents
  // are whatever an earlier kernel left. Throws Error(kRuntime) "out of memory: ..." when it
  // cannot grow.
  void* Scratch(int64_t bytes);

 private:
  void WorkerLoop(int64_t worker_index);

  InlineStream stream_;
  int64_t compute_threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  const std::function<void(int64_t, int64_t)>* task_ = nullptr;
  int64_t chunk_count_ = 0;
  int64_t chunk_size_ = 0;
  int64_t total_ = 0;
  int64_t generation_ = 0;
  int64_t pending_workers_ = 0;
  std::exception_ptr worker_error_;
  bool stopping_ = false;
  std::unique_ptr<void, decltype(&std::free)> scratch_{nullptr, std::free};
  int64_t scratch_bytes_ = 0;
};

}  // namespace oneflow
