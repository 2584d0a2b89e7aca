#include "oneflow/comm/serial_worker.h"

namespace oneflow {

SerialWorker::SerialWorker() : state_(std::make_shared<State>()) {
  thread_ = std::thread(&SerialWorker::Loop, state_);
}

SerialWorker::~SerialWorker() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    if (detached_) { state_->queue.clear(); }
  }
  state_->has_work.notify_all();
  if (detached_) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void SerialWorker::Post(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->queue.push_back(std::move(work));
  }
  state_->has_work.notify_one();
}

void SerialWorker::Detach() { detached_ = true; }

void SerialWorker::Loop(std::shared_ptr<State> state) {
  while (true) {
    std::function<void()> work;
    {
      std::unique_lock<std::mutex> lock(state->mutex);
      state->has_work.wait(lock, [&] { return state->stopping || !state->queue.empty(); });
      if (state->queue.empty()) { return; }
      work = std::move(state->queue.front());
      state->queue.pop_front();
    }
    work();
  }
}

}  // namespace oneflow
