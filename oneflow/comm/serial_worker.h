#pragma once
// A thread that runs posted work one item at a time, in posting order. The data plane gives each
// ordered stream of blocking transfers (a point-to-point channel, one rank of a collective) its own
// worker, so a transfer waiting for its peer never holds up another stream.

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace oneflow {

class SerialWorker {
 public:
  SerialWorker();
  // Joins the thread after the work already posted, unless Detach() was called.
  ~SerialWorker();
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  void Post(std::function<void()> work);
  // For a worker that may be stuck in a transfer whose peer is gone: the destructor drops the
  // work not yet started and lets the thread end on its own.
  void Detach();

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable has_work;
    std::deque<std::function<void()>> queue;
    bool stopping = false;
  };
  static void Loop(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;  // shared with the thread, which may outlive a detached worker
  std::thread thread_;
  bool detached_ = false;
};

}  // namespace oneflow
