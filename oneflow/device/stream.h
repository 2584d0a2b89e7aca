#pragma once
// A device stream: the order in which a device runs work. Actors enqueue completion callbacks
// that run after all work enqueued before them. The CPU stream runs work inline, so its callbacks
// run at once; a CUDA stream will run them from an event poller, without any change to actors.
// Device-neutral: compute resources (a CPU thread pool, BLAS handles) belong to the device
// context (device_context.h), not to the stream.

#include <functional>

namespace oneflow {

class Stream {
 public:
  virtual ~Stream() = default;
  virtual void AddCallback(std::function<void()> callback) = 0;
};

// Work runs inline on the calling thread, so a callback runs at once.
class InlineStream final : public Stream {
 public:
  void AddCallback(std::function<void()> callback) override { callback(); }
};

}  // namespace oneflow
