#include "oneflow/device/event_poller.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "oneflow/common/cpu_relax.h"
#include "oneflow/common/error.h"

namespace oneflow {

namespace {

// Polls before backing off: a kernel that is almost done is caught within a microsecond or two.
constexpr int64_t kSpinPolls = 64;
// Then yields the core between polls for a while, then sleeps.
constexpr int64_t kYieldPolls = 256;
// Short sleeps first (a step of a small job takes tens of microseconds), longer ones after that,
// so a long kernel costs the poller almost no CPU.
constexpr int64_t kShortSleepPolls = 1024;
constexpr std::chrono::microseconds kShortSleep(20);
constexpr std::chrono::microseconds kLongSleep(50);

}  // namespace

EventPoller::EventPoller(std::function<void(std::exception_ptr)> on_error,
                         std::function<void()> on_start)
    : on_error_(std::move(on_error)), on_start_(std::move(on_start)) {
  thread_ = std::thread([this] { Loop(); });
}

EventPoller::~EventPoller() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_added_.notify_all();
  thread_.join();
}

void EventPoller::Add(std::function<bool()> is_done, std::function<void()> callback) {
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // After an error the owner is aborting: nothing more runs. The functions are destroyed when
    // this call returns, outside the lock.
    if (failed_) { return; }
    was_empty = queue_.empty();
    queue_.push_back(Entry{std::move(is_done), std::move(callback)});
  }
  // The poller waits on the condition variable only while the queue is empty.
  if (was_empty) { work_added_.notify_one(); }
}

void EventPoller::WaitIdle() {
  OF_CHECK(std::this_thread::get_id() != thread_.get_id())
      << "EventPoller::WaitIdle called from one of its own callbacks (it would never return)";
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty(); });
}

bool EventPoller::failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failed_;
}

void EventPoller::WaitDone(const std::function<bool()>& is_done) {
  for (int64_t polls = 0; !is_done(); ++polls) {
    if (polls < kSpinPolls) {
      CpuRelax();
    } else if (polls < kYieldPolls) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(polls < kShortSleepPolls ? kShortSleep : kLongSleep);
    }
  }
}

void EventPoller::Loop() {
  if (on_start_) {
    try {
      on_start_();
    } catch (...) { Fail(std::current_exception()); }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_added_.wait(lock, [this] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) { break; }  // stopping, and every entry has run
    Entry& entry = queue_.front();
    lock.unlock();
    std::exception_ptr error;
    try {
      WaitDone(entry.is_done);
      entry.callback();
    } catch (...) { error = std::current_exception(); }
    if (error) {
      Fail(error);
      lock.lock();
      continue;
    }
    // Destroys what the entry captured outside the lock (a destructor may call Add).
    entry.is_done = nullptr;
    entry.callback = nullptr;
    lock.lock();
    queue_.pop_front();
    if (queue_.empty()) { idle_.notify_all(); }
  }
}

void EventPoller::Fail(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failed_ = true;  // from now on Add drops its entry
  }
  // Reported before the queue is emptied, so a WaitIdle that returns has seen the report.
  try {
    if (on_error_) { on_error_(error); }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oneflow: EventPoller: the error handler threw: %s\n", e.what());
  } catch (...) { std::fprintf(stderr, "oneflow: EventPoller: the error handler threw\n"); }
  // Once failed_ is set only this thread touches the entries, so what they captured can be
  // destroyed outside the lock, before WaitIdle may return.
  for (Entry& entry : queue_) {
    entry.is_done = nullptr;
    entry.callback = nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.clear();
  }
  idle_.notify_all();
}

}  // namespace oneflow
