#pragma once
// Runs callbacks when asynchronous "events" (e.g. a CUDA event recorded on a stream) complete, on
// one background thread, in the order the callbacks were added. Only the oldest pending entry is
// polled: a stream finishes its work in order, so a later event cannot be done before an earlier
// one is. While an entry is pending the thread polls briefly, then yields, then sleeps tens of
// microseconds between polls; with nothing pending it sleeps on a condition variable and costs
// no CPU. Device-neutral (no CUDA here): a CUDA stream supplies its events as `is_done`
// functions. Owned by the stream whose events it polls.

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace oneflow {

class EventPoller {
 public:
  // `on_error` is called once, on the poller thread, with the first exception thrown by
  // `on_start`, an `is_done` or a callback; the entries pending then, and any added later, are
  // dropped without running (their owner aborts). `on_start`, when given, runs first on the
  // poller thread (e.g. to make a GPU current there).
  explicit EventPoller(std::function<void(std::exception_ptr)> on_error,
                       std::function<void()> on_start = {});
  // Waits until every entry added has run its callback (or was dropped), then joins the thread.
  // Must not be called from a callback.
  ~EventPoller();

  EventPoller(const EventPoller&) = delete;
  EventPoller& operator=(const EventPoller&) = delete;

  // Calls `callback` on the poller thread once `is_done()` has returned true and the callbacks of
  // every earlier entry have run. Thread-safe; may be called from a callback.
  void Add(std::function<bool()> is_done, std::function<void()> callback);

  // Blocks until every entry added before (and by the callbacks of those entries) has run its
  // callback or was dropped after an error. Must not be called from a callback.
  void WaitIdle();

  // True once an error was reported to `on_error`.
  bool failed() const;

 private:
  struct Entry {
    std::function<bool()> is_done;
    std::function<void()> callback;
  };

  void Loop();
  // Blocks (polling with back-off) until `is_done` returns true.
  static void WaitDone(const std::function<bool()>& is_done);
  void Fail(std::exception_ptr error);

  std::function<void(std::exception_ptr)> on_error_;
  std::function<void()> on_start_;
  mutable std::mutex mutex_;
  std::condition_variable work_added_;  // the poller waits on it while the queue is empty
  std::condition_variable idle_;        // WaitIdle and the destructor wait on it
  // The front entry stays in the queue while it is polled and its callback runs; entries are
  // only removed by the poller thread, and std::deque keeps references to them valid when
  // others are appended.
  std::deque<Entry> queue_;
  bool failed_ = false;
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything above is initialised
};

}  // namespace oneflow
