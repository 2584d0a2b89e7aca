#pragma once
// A Stream for actors whose work completes asynchronously and in any order, on other threads
// (collectives, transfers between machines): callbacks run in the order they were added, each
// after all work begun before it has completed, so consumers still see pieces in order.

#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "oneflow/device/stream.h"

namespace oneflow {

class CompletionOrderStream final : public Stream {
 public:
  int64_t BeginWork() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back(Entry());
    return first_ticket_ + static_cast<int64_t>(entries_.size()) - 1;
  }

  void EndWork(int64_t ticket) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      entries_.at(ticket - first_ticket_).done = true;
    }
    Flush();
  }

  void AddCallback(std::function<void()> callback) override {
    std::unique_lock<std::mutex> lock(mutex_);
    if (entries_.empty() && !flushing_) {
      lock.unlock();
      callback();
      return;
    }
    // Behind unfinished work, or behind callbacks another thread is running: the flusher (or the
    // EndWork still to come) runs it in turn.
    if (entries_.empty()) { entries_.push_back(Entry{true, {}}); }
    entries_.back().callbacks.push_back(std::move(callback));
  }

 private:
  struct Entry {
    bool done = false;
    std::vector<std::function<void()>> callbacks;
  };

  // Runs the callbacks of the finished prefix, one flusher at a time, in order.
  void Flush() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (flushing_) { return; }
    flushing_ = true;
    while (!entries_.empty() && entries_.front().done) {
      std::vector<std::function<void()>> callbacks = std::move(entries_.front().callbacks);
      entries_.pop_front();
      ++first_ticket_;
      lock.unlock();
      for (auto& callback : callbacks) { callback(); }
      lock.lock();
    }
    flushing_ = false;
  }

  std::mutex mutex_;
  std::deque<Entry> entries_;
  int64_t first_ticket_ = 0;
  bool flushing_ = false;
};

}  // namespace oneflow
