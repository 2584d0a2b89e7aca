// The two ends of every job's iterations. The source tick acts once per launched job instance
// (and its register count bounds how many iterations of the job are in flight); the sink tick
// acts once every leaf of an iteration is done and finishes that instance.
// On the other machines of a job both only pass the tick on: their source tick reads machine 0's
// (received over the data plane), their sink tick's register goes to machine 0's sink.
#include "oneflow/common/error.h"
#include "oneflow/runtime/actors/source_tick_actor.h"
#include "oneflow/runtime/job_instance.h"

namespace oneflow {

void SourceTickActor::HandleCommand(const ActorMessage& message) {
  if (message.type == ActorMessageType::kLaunch) {
    pending_.push_back(message.job_instance);
  } else if (message.type == ActorMessageType::kStop) {
    stopping_ = true;
  }
}

void SourceTickActor::NextPiece(int64_t* piece_id, std::shared_ptr<JobInstance>* instance) {
  *piece_id = next_piece_id_++;
  *instance = pending_.front();
  pending_.pop_front();
}

namespace {

class SinkTickActor final : public Actor {
 public:
  using Actor::Actor;

 private:
  void Act(const std::vector<Regst*>& inputs, const std::vector<Regst*>& outputs) override {
    OF_CHECK(!inputs.empty()) << "sink tick without inputs";
    if (!outputs.empty()) { return; }  // another machine's: machine 0's sink finishes
    const std::shared_ptr<JobInstance>& instance = inputs.front()->job_instance();
    if (instance) { instance->Finish(); }
    context().on_iteration_finished(task().job_id(), instance.get());
  }
};

}  // namespace

std::unique_ptr<Actor> NewSourceTickActor(const TaskProto& task, const ActorContext& context,
                                          DeviceContext& device) {
  return std::make_unique<SourceTickActor>(task, context, device);
}

std::unique_ptr<Actor> NewSinkTickActor(const TaskProto& task, const ActorContext& context,
                                        DeviceContext& device) {
  return std::make_unique<SinkTickActor>(task, context, device);
}

}  // namespace oneflow
