#include "oneflow/device/cpu_device_context.h"

#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "oneflow/common/alignment.h"
#include "oneflow/common/error.h"

namespace oneflow {

CpuDeviceContext::CpuDeviceContext(int64_t compute_threads)
    : compute_threads_(std::max<int64_t>(compute_threads, 1)) {
  for (int64_t i = 1; i < compute_threads_; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
  }
}

CpuDeviceContext::~CpuDeviceContext() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& worker : workers_) { worker.join(); }
}

const std::string& CpuDeviceContext::device_tag() const {
  static const std::string kCpu = "cpu";
  return kCpu;
}

void CpuDeviceContext::BindCurrentThread() {
  openblas_set_num_threads(static_cast<int>(compute_threads_));
  omp_set_num_threads(static_cast<int>(compute_threads_));  // oneDNN's OpenMP teams
}

void* CpuDeviceContext::Scratch(int64_t bytes) {
  if (bytes > scratch_bytes_) {
    const int64_t rounded = AlignedSize(bytes);
    scratch_.reset();  // the old buffer goes first: the peak is the new size, not both
    scratch_.reset(std::aligned_alloc(kMemoryAlignment, static_cast<size_t>(rounded)));
    if (scratch_ == nullptr) {
      scratch_bytes_ = 0;
      throw Error(ErrorKind::kRuntime)
          << "out of memory: cannot allocate " << rounded << " bytes of kernel scratch memory";
    }
    scratch_bytes_ = rounded;
  }
  return scratch_.get();
}

void CpuDeviceContext::ParallelFor(int64_t count, int64_t grain,
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
    worker_error_ = nullptr;
    ++generation_;
  }
  work_ready_.notify_all();
  std::exception_ptr caller_error;
  try {
    fn(0, std::min(chunk_size, count));  // chunk 0 on the calling thread
  } catch (...) {
    caller_error = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  work_done_.wait(lock, [this] { return pending_workers_ == 0; });
  task_ = nullptr;
  std::exception_ptr error = caller_error ? caller_error : worker_error_;
  worker_error_ = nullptr;
  lock.unlock();
  if (error) { std::rethrow_exception(error); }
}

void CpuDeviceContext::WorkerLoop(int64_t worker_index) {
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
    std::exception_ptr error;
    if (has_chunk) {
      try {
        (*task)(begin, end);
      } catch (...) {
        error = std::current_exception();
      }
    }
    lock.lock();
    if (error && !worker_error_) { worker_error_ = error; }
    if (--pending_workers_ == 0) { work_done_.notify_one(); }
  }
}

}  // namespace oneflow
