#pragma once
// A runtime thread: owns the actors of one device and that device's context (stream and compute
// pool), and drives the actors only by messages. Every message, from this thread or another,
// goes through one FIFO queue: an actor's registers may be sent from different threads (a
// collective completes wherever its last share finishes), and one queue keeps them in the order
// they were sent. The thread ends when its last actor has finished, or at once when the runtime
// aborts.
// An exception escaping an actor is handed to `on_error` (never std::terminate); the thread then
// stops, since its actors' state is no longer trustworthy.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "oneflow/device/device_context.h"
#include "oneflow/runtime/actor_message.h"

namespace oneflow {

class Actor;

class Thread {
 public:
  using ErrorHandler = std::function<void(std::exception_ptr)>;
  Thread(int64_t thread_id, std::unique_ptr<DeviceContext> device, ErrorHandler on_error);
  ~Thread();

  int64_t thread_id() const { return thread_id_; }
  DeviceContext& device() { return *device_; }
  void AddActor(std::unique_ptr<Actor> actor);
  void Start();
  // Thread-safe.
  void Send(ActorMessage message);
  // Makes the thread stop at its next message, dropping its actors (the runtime is aborting).
  void Abort();
  void Join();
  // Visits every actor this thread ran; valid after Join().
  template <typename Fn>
  void ForEachFinishedActor(Fn fn) const {
    for (const auto& actor : finished_actors_) { fn(*actor); }
  }

 private:
  void Loop();
  void Dispatch(ActorMessage& message);

  int64_t thread_id_;
  std::unique_ptr<DeviceContext> device_;
  ErrorHandler on_error_;
  std::map<int64_t, std::unique_ptr<Actor>> actors_;
  // Finished actors are kept (not destroyed) until the thread is, so their registers stay valid
  // and their instrumentation can be read.
  std::vector<std::unique_ptr<Actor>> finished_actors_;
  std::mutex mutex_;
  std::condition_variable has_message_;
  std::deque<ActorMessage> queue_;
  std::atomic<int64_t> queued_{0};  // size of queue_, readable without the lock
  std::atomic<bool> aborted_{false};
  std::thread thread_;
};

// Routes a message to the thread of its destination actor.
class MessageBus {
 public:
  void Register(int64_t actor_id, Thread* thread);
  void Send(ActorMessage message) const;

 private:
  std::map<int64_t, Thread*> actor_to_thread_;
};

}  // namespace oneflow
