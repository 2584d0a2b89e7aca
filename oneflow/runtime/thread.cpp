#include "oneflow/runtime/thread.h"

#include <chrono>

#include "oneflow/common/cpu_relax.h"
#include "oneflow/common/error.h"
#include "oneflow/runtime/actor.h"

namespace oneflow {

Thread::Thread(int64_t thread_id, std::unique_ptr<DeviceContext> device, ErrorHandler on_error)
    : thread_id_(thread_id), device_(std::move(device)), on_error_(std::move(on_error)) {}

Thread::~Thread() { Join(); }

void Thread::AddActor(std::unique_ptr<Actor> actor) {
  int64_t id = actor->actor_id();
  actors_.emplace(id, std::move(actor));
}

void Thread::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void Thread::Send(ActorMessage message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(message));
    queued_.store(static_cast<int64_t>(queue_.size()), std::memory_order_release);
  }
  // The thread itself is awake; any other sender may have to wake it.
  if (std::this_thread::get_id() != thread_.get_id()) { has_message_.notify_one(); }
}

void Thread::Abort() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_.store(true, std::memory_order_release);
    queued_.store(1, std::memory_order_release);  // ends the spin
  }
  has_message_.notify_one();
}

void Thread::Join() {
  if (thread_.joinable()) { thread_.join(); }
}

void Thread::Dispatch(ActorMessage& message) {
  if (message.type == ActorMessageType::kCall) {
    message.call();
    return;
  }
  auto it = actors_.find(message.dst_actor_id);
  OF_CHECK(it != actors_.end()) << "thread " << thread_id_ << " got a message for actor "
                                << message.dst_actor_id << ", which it does not run";
  if (it->second->ProcessMessage(message)) {
    finished_actors_.push_back(std::move(it->second));
    actors_.erase(it);
  }
}

void Thread::Loop() {
  try {
    device_->BindCurrentThread();
    std::deque<ActorMessage> batch;
    while (!actors_.empty() && !aborted_.load(std::memory_order_acquire)) {
      // A short spin first: the next message (a launch, a returned register) usually follows
      // within microseconds, and a sleeping thread takes tens of microseconds to wake.
      const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
      while (queued_.load(std::memory_order_acquire) == 0 &&
             std::chrono::steady_clock::now() < spin_until) {
        CpuRelax();
      }
      {
        std::unique_lock<std::mutex> lock(mutex_);
        has_message_.wait(lock, [this] { return !queue_.empty() || aborted_.load(); });
        batch.swap(queue_);
        queued_.store(0, std::memory_order_release);
      }
      while (!batch.empty() && !aborted_.load(std::memory_order_acquire)) {
        ActorMessage message = std::move(batch.front());
        batch.pop_front();
        Dispatch(message);
      }
      batch.clear();
    }
  } catch (...) {
    aborted_.store(true);
    on_error_(std::current_exception());
  }
}

void MessageBus::Register(int64_t actor_id, Thread* thread) { actor_to_thread_[actor_id] = thread; }

void MessageBus::Send(ActorMessage message) const {
  auto it = actor_to_thread_.find(message.dst_actor_id);
  OF_CHECK(it != actor_to_thread_.end()) << "no thread runs actor " << message.dst_actor_id;
  it->second->Send(std::move(message));
}

}  // namespace oneflow
