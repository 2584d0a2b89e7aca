// EventPoller with fake events: atomic flags that other threads set, as a GPU would complete the
// work before a recorded event. No GPU and no sleeps; also run under ThreadSanitizer
// (scripts/run_tsan.sh).
#include "oneflow/device/event_poller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "oneflow/common/error.h"

namespace oneflow {
namespace {

// Records what the poller reported; read by the test thread after WaitIdle or the destructor.
struct ErrorLog {
  std::mutex mutex;
  int64_t calls = 0;
  std::string message;

  std::function<void(std::exception_ptr)> Handler() {
    return [this](std::exception_ptr error) {
      std::lock_guard<std::mutex> lock(mutex);
      ++calls;
      try {
        std::rethrow_exception(error);
      } catch (const Error& e) { message = e.message(); } catch (const std::exception& e) {
        message = e.what();
      }
    };
  }
};

// Sets the flags in `order` on its own thread, yielding now and then so that the poller sees
// some of them pending.
std::thread SetFlagsLater(std::vector<std::atomic<bool>>& flags, std::vector<int64_t> order) {
  return std::thread([&flags, order] {
    for (size_t i = 0; i < order.size(); ++i) {
      if (i % 8 == 0) { std::this_thread::yield(); }
      flags[order[i]].store(true, std::memory_order_release);
    }
  });
}

TEST(EventPollerTest, CallbacksRunInOrderAndOnlyAfterTheirEvent) {
  constexpr int64_t kCount = 64;
  std::vector<std::atomic<bool>> flags(kCount);
  std::vector<int64_t> ran;           // touched by the poller thread only, until WaitIdle
  int64_t ran_before_event_done = 0;  // likewise
  ErrorLog errors;
  EventPoller poller(errors.Handler());
  for (int64_t i = 0; i < kCount; ++i) {
    poller.Add([&flags, i] { return flags[i].load(std::memory_order_acquire); },
               [&, i] {
                 if (!flags[i].load(std::memory_order_acquire)) { ++ran_before_event_done; }
                 ran.push_back(i);
               });
  }
  // Events complete in a scrambled order; callbacks must still run in the order added.
  std::vector<int64_t> order(kCount);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  std::thread setter = SetFlagsLater(flags, order);
  poller.WaitIdle();
  setter.join();
  std::vector<int64_t> expected(kCount);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(ran, expected);
  EXPECT_EQ(ran_before_event_done, 0);
  EXPECT_EQ(errors.calls, 0);
  EXPECT_FALSE(poller.failed());
}

TEST(EventPollerTest, LaterEventsWaitForThePendingFrontOne) {
  std::atomic<bool> first_done{false};
  std::atomic<int64_t> first_polls{0};
  std::atomic<int64_t> callbacks{0};
  std::vector<int64_t> ran;
  ErrorLog errors;
  EventPoller poller(errors.Handler());
  poller.Add(
      [&] {
        first_polls.fetch_add(1);
        return first_done.load();
      },
      [&] {
        ran.push_back(0);
        callbacks.fetch_add(1);
      });
  // Already complete, but behind a pending entry: stream order says it must wait.
  poller.Add([] { return true; },
             [&] {
               ran.push_back(1);
               callbacks.fetch_add(1);
             });
  // The poller has seen the first event pending many times, past its spinning phase.
  while (first_polls.load() < 100) { std::this_thread::yield(); }
  EXPECT_EQ(callbacks.load(), 0);
  first_done.store(true);
  poller.WaitIdle();
  EXPECT_EQ(ran, (std::vector<int64_t>{0, 1}));
}

TEST(EventPollerTest, DestructorRunsEveryPendingCallback) {
  constexpr int64_t kCount = 64;
  std::vector<std::atomic<bool>> flags(kCount);
  std::atomic<int64_t> callbacks{0};
  std::thread setter;
  {
    EventPoller poller([](std::exception_ptr) {});
    for (int64_t i = 0; i < kCount; ++i) {
      poller.Add([&flags, i] { return flags[i].load(); }, [&] { callbacks.fetch_add(1); });
    }
    std::vector<int64_t> order(kCount);
    std::iota(order.rbegin(), order.rend(), 0);  // the last event completes first
    setter = SetFlagsLater(flags, order);
  }  // the destructor waits for all of them
  EXPECT_EQ(callbacks.load(), kCount);
  setter.join();
}

TEST(EventPollerTest, WaitIdleOnAnEmptyPollerReturnsAtOnce) {
  EventPoller poller([](std::exception_ptr) {});
  poller.WaitIdle();
  EXPECT_FALSE(poller.failed());
}

TEST(EventPollerTest, ThrowingEventReportsOnceAndDropsTheRest) {
  ErrorLog errors;
  std::vector<int64_t> ran;
  auto captured = std::make_shared<int>(0);  // held by the dropped entries
  EventPoller poller(errors.Handler());
  poller.Add([] { return true; }, [&] { ran.push_back(0); });
  poller.Add([]() -> bool { throw Error(ErrorKind::kRuntime) << "device lost"; },
             [&] { ran.push_back(1); });
  for (int64_t i = 2; i < 10; ++i) {
    poller.Add([captured] { return true; }, [&ran, captured, i] { ran.push_back(i); });
  }
  poller.WaitIdle();
  EXPECT_TRUE(poller.failed());
  EXPECT_EQ(errors.calls, 1);
  EXPECT_EQ(errors.message, "device lost");
  EXPECT_EQ(ran, std::vector<int64_t>{0});
  // The dropped entries were destroyed, not kept.
  EXPECT_EQ(captured.use_count(), 1);

  // After the error nothing more runs, and nothing is reported again.
  poller.Add([] { return true; }, [&] { ran.push_back(100); });
  poller.Add([]() -> bool { throw Error(ErrorKind::kRuntime) << "again"; }, [] {});
  poller.WaitIdle();
  EXPECT_EQ(ran, std::vector<int64_t>{0});
  EXPECT_EQ(errors.calls, 1);
}

TEST(EventPollerTest, ThrowingCallbackIsReportedLikeAThrowingEvent) {
  ErrorLog errors;
  std::vector<int64_t> ran;
  {
    EventPoller poller(errors.Handler());
    poller.Add([] { return true; }, [] { throw Error(ErrorKind::kInternal) << "callback bug"; });
    poller.Add([] { return true; }, [&] { ran.push_back(1); });
  }
  EXPECT_EQ(errors.calls, 1);
  EXPECT_EQ(errors.message, "callback bug");
  EXPECT_TRUE(ran.empty());
}

TEST(EventPollerTest, CallbacksMayAddEntries) {
  constexpr int64_t kDepth = 50;
  std::vector<int64_t> ran;
  ErrorLog errors;
  EventPoller poller(errors.Handler());
  // Each callback adds the next entry; WaitIdle must wait for the whole chain.
  std::function<void(int64_t)> add_link = [&](int64_t index) {
    poller.Add([] { return true; },
               [&, index] {
                 ran.push_back(index);
                 if (index + 1 < kDepth) { add_link(index + 1); }
               });
  };
  add_link(0);
  poller.WaitIdle();
  EXPECT_EQ(static_cast<int64_t>(ran.size()), kDepth);
  for (int64_t i = 0; i < static_cast<int64_t>(ran.size()); ++i) { EXPECT_EQ(ran[i], i); }
  EXPECT_EQ(errors.calls, 0);
}

TEST(EventPollerTest, DestructorWaitsForEntriesAddedByCallbacks) {
  std::atomic<int64_t> callbacks{0};
  {
    EventPoller poller([](std::exception_ptr) {});
    poller.Add([] { return true; },
               [&] {
                 callbacks.fetch_add(1);
                 poller.Add([] { return true; }, [&] { callbacks.fetch_add(1); });
               });
  }
  EXPECT_EQ(callbacks.load(), 2);
}

TEST(EventPollerTest, WaitIdleFromACallbackIsReportedNotADeadlock) {
  ErrorLog errors;
  {
    EventPoller poller(errors.Handler());
    poller.Add([] { return true; }, [&] { poller.WaitIdle(); });
  }
  EXPECT_EQ(errors.calls, 1);
  EXPECT_NE(errors.message.find("WaitIdle"), std::string::npos) << errors.message;
}

TEST(EventPollerTest, ConcurrentProducersKeepTheOrderOfAdding) {
  constexpr int64_t kProducers = 4;
  constexpr int64_t kPerProducer = 40;
  constexpr int64_t kCount = kProducers * kPerProducer;
  std::vector<std::atomic<bool>> flags(kCount);
  std::vector<int64_t> ran;
  ErrorLog errors;
  EventPoller poller(errors.Handler());
  // Tickets are taken under the same lock as the Add, so ticket order is the order of adding.
  std::mutex add_mutex;
  int64_t next_ticket = 0;
  std::vector<std::thread> producers;
  for (int64_t p = 0; p < kProducers; ++p) {
    producers.emplace_back([&] {
      for (int64_t i = 0; i < kPerProducer; ++i) {
        std::lock_guard<std::mutex> lock(add_mutex);
        const int64_t ticket = next_ticket++;
        poller.Add([&flags, ticket] { return flags[ticket].load(); },
                   [&ran, ticket] { ran.push_back(ticket); });
      }
    });
  }
  std::vector<int64_t> order(kCount);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(11));
  std::thread setter = SetFlagsLater(flags, order);
  for (std::thread& producer : producers) { producer.join(); }
  poller.WaitIdle();
  setter.join();
  std::vector<int64_t> expected(kCount);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(ran, expected);
  EXPECT_EQ(errors.calls, 0);
}

TEST(EventPollerTest, OnStartRunsFirstOnThePollerThread) {
  std::thread::id start_thread;
  std::thread::id poll_thread;
  bool started_before_poll = false;
  bool started = false;
  {
    EventPoller poller([](std::exception_ptr) {},
                       [&] {
                         started = true;
                         start_thread = std::this_thread::get_id();
                       });
    poller.Add(
        [&] {
          started_before_poll = started;
          poll_thread = std::this_thread::get_id();
          return true;
        },
        [] {});
  }
  EXPECT_TRUE(started_before_poll);
  EXPECT_EQ(start_thread, poll_thread);
  EXPECT_NE(start_thread, std::this_thread::get_id());
}

TEST(EventPollerTest, FailingOnStartIsReportedAndNothingRuns) {
  ErrorLog errors;
  std::atomic<int64_t> callbacks{0};
  {
    EventPoller poller(errors.Handler(),
                       [] { throw Error(ErrorKind::kRuntime) << "cannot select gpu 3"; });
    poller.Add([] { return true; }, [&] { callbacks.fetch_add(1); });
    poller.WaitIdle();
    EXPECT_TRUE(poller.failed());
  }
  EXPECT_EQ(callbacks.load(), 0);
  EXPECT_EQ(errors.calls, 1);
  EXPECT_EQ(errors.message, "cannot select gpu 3");
}

}  // namespace
}  // namespace oneflow
