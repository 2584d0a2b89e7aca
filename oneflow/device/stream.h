#pragma once
// A device stream: kernels enqueue work on it, and actors enqueue completion callbacks that run
// after all work enqueued before them. The CPU stream runs work inline, so its callbacks run at
// once; a CUDA stream will run them from an event poller, without any change to actors.

#include <cstdint>
#include <functional>

namespace oneflow {

class ThreadPool;

class Stream {
 public:
  virtual ~Stream() = default;
  virtual void AddCallback(std::function<void()> callback) = 0;
  // Runs fn(begin, end) over [0, count) in chunks of at least `grain`, possibly in parallel on
  // the device's compute threads; returns when all chunks are done.
  virtual void ParallelFor(int64_t count, int64_t grain,
                           const std::function<void(int64_t, int64_t)>& fn) = 0;
};

}  // namespace oneflow
