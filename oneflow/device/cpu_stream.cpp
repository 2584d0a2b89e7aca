#include "oneflow/device/cpu_stream.h"

#include <cblas.h>

#include <algorithm>

namespace oneflow {

CpuStream::CpuStream(int64_t compute_threads) : compute_threads_(compute_threads) {
  for (int64_t i = 1; i < compute_threads; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
  }
}

void CpuStream::BindCurrentThread() const {
  openblas_set_num_threads(static_cast<int>(compute_threads_));
}

CpuStream::~CpuStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) { worker.join(); }
}

void CpuStream::ParallelFor(int64_t count, int64_t grain,
                            const std::function<void(int64_t, int64_t)>& fn) {
  if (count <= 0) { return; }
  const int64_t threads = static_cast<int64_t>(workers_.size()) + 1;
  grain = std::max<int64_t>(grain, 1);
  if (threads == 1 || count < 2 * grain) {
    fn(0, count);
    return;
  }
  const int64_t chunks = std::min(threads, (count + grain - 1) / grain);
  const int64_t chunk_size = (count + chunks - 1) / chunks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &fn;
    chunk_count_ = chunks;
    chunk_size_ = chunk_size;
    total_ = count;
    pending_workers_ = static_cast<int64_t>(workers_.size());
    ++generation_;
  }
  work_ready_.notify_all();
  fn(0, std::min(chunk_size, count));  // chunk 0 on the calling thread
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [this] { return pending_workers_ == 0; });
  task_ = nullptr;
}

void CpuStream::WorkerLoop(int64_t worker_index) {
  int64_t seen_generation = 0;
  while (true) {
    std::unique_lock<std::mutex> lock(mutex_);
    work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen_generation; });
    if (stopping_) { return; }
    seen_generation = generation_;
    const auto* task = task_;
    int64_t begin = worker_index * chunk_size_;
    int64_t end = std::min(total_, begin + chunk_size_);
    bool has_chunk = worker_index < chunk_count_ && begin < end;
    lock.unlock();
    if (has_chunk) { (*task)(begin, end); }
    lock.lock();
    if (--pending_workers_ == 0) { work_done_.notify_one(); }
  }
}

}  // namespace oneflow
