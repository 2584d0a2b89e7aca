// Collective actor: one rank of a collective boxing (all-reduce, reduce-scatter, all-gather,
// all-to-all). Its act hands its input and output part to the communicator and returns at once;
// its registers go out when the collective completes, which may be on another thread and, for
// consecutive pieces, in any order. Its own stream therefore releases callbacks strictly in the
// order the work was started, so consumers still see pieces in order.
#include <deque>
#include <mutex>

#include "oneflow/comm/communicator.h"
#include "oneflow/common/error.h"
#include "oneflow/device/stream.h"
#include "oneflow/runtime/actor.h"
#include "oneflow/runtime/job_instance.h"

namespace oneflow {
namespace {

// Work completes asynchronously and in any order; callbacks run in the order they were added,
// each after all work begun before it has completed.
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

class CollectiveActor final : public Actor {
 public:
  CollectiveActor(const TaskProto& task, const ActorContext& context, DeviceContext& device)
      : Actor(task, context, device) {
    OF_CHECK(context.communicator != nullptr) << "a collective task needs a communicator";
    const BlobBinding& input = task.collective().input();
    input_position_ = ConsumedPosition(input.regst_desc_id());
    input_blob_ = context.regst_descs.at(input.regst_desc_id())->blob_size() == 1
                      ? 0
                      : BlobIndexIn(*context.regst_descs.at(input.regst_desc_id()), input.lbn());
  }

  Stream& stream() override { return stream_; }

 private:
  static int64_t BlobIndexIn(const RegstDescProto& desc, const std::string& lbn) {
    for (int64_t index = 0; index < desc.blob_size(); ++index) {
      if (desc.blob(index).lbn() == lbn) { return index; }
    }
    OF_CHECK(false) << "register desc " << desc.regst_desc_id() << " holds no blob '" << lbn << "'";
    return -1;
  }

  void Act(const std::vector<Regst*>& inputs, const std::vector<Regst*>& outputs) override {
    Regst* input = inputs.at(input_position_);
    CollectiveCall call;
    call.task = &task().collective();
    call.piece_id = input->piece_id();
    call.input = input->blob(input_blob_).raw();
    call.output = outputs.at(0)->blob(0).mut_raw();
    std::shared_ptr<JobInstance> instance = input->job_instance();
    const int64_t ticket = stream_.BeginWork();
    context().communicator->Submit(call, [this, ticket, instance](std::exception_ptr error) {
      if (error && instance) { instance->AddError(error); }
      stream_.EndWork(ticket);
    });
  }

  CompletionOrderStream stream_;
  int64_t input_position_ = 0;
  int64_t input_blob_ = 0;
};

}  // namespace

std::unique_ptr<Actor> NewCollectiveActor(const TaskProto& task, const ActorContext& context,
                                          DeviceContext& device) {
  return std::make_unique<CollectiveActor>(task, context, device);
}

}  // namespace oneflow
