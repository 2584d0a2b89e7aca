#pragma once
// The CPU stream: work runs inline on the calling actor thread, so completion callbacks run at
// once. ParallelFor splits large loops over the device's compute threads.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "oneflow/device/stream.h"

namespace oneflow {

class CpuStream final : public Stream {
 public:
  // `compute_threads` threads in all work on a ParallelFor (the caller included).
  explicit CpuStream(int64_t compute_threads);
  ~CpuStream() override;

  void AddCallback(std::function<void()> callback) override { callback(); }
  // Called on each runtime thread that launches work on this stream: sets how many threads BLAS
  // may use from it (an OpenMP BLAS keeps that setting per calling thread).
  void BindCurrentThread() const;
  void ParallelFor(int64_t count, int64_t grain,
                   const std::function<void(int64_t, int64_t)>& fn) override;

 private:
  void WorkerLoop(int64_t worker_index);

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
  bool stopping_ = false;
};

}  // namespace oneflow
