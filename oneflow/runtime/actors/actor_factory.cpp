// NewActor: the actor class of each task type.
#include "oneflow/common/error.h"
#include "oneflow/runtime/actor.h"

namespace oneflow {

std::unique_ptr<Actor> NewSourceTickActor(const TaskProto& task, const ActorContext& context,
                                          DeviceContext& device);
std::unique_ptr<Actor> NewSinkTickActor(const TaskProto& task, const ActorContext& context,
                                        DeviceContext& device);
std::unique_ptr<Actor> NewComputeActor(const TaskProto& task, const ActorContext& context,
                                       DeviceContext& device);

std::unique_ptr<Actor> NewCollectiveActor(const TaskProto& task, const ActorContext& context,
                                          DeviceContext& device);

std::unique_ptr<Actor> NewSendActor(const TaskProto& task, const ActorContext& context,
                                    DeviceContext& device);
std::unique_ptr<Actor> NewRecvActor(const TaskProto& task, const ActorContext& context,
                                    DeviceContext& device);

std::unique_ptr<Actor> NewActor(const TaskProto& task, const ActorContext& context,
                                DeviceContext& device) {
  switch (task.task_type()) {
    case kCompute:
      return NewComputeActor(task, context, device);
    case kSourceTick:
      return NewSourceTickActor(task, context, device);
    case kSinkTick:
      return NewSinkTickActor(task, context, device);
    case kCollective:
      return NewCollectiveActor(task, context, device);
    case kSend:
      return NewSendActor(task, context, device);
    case kRecv:
      return NewRecvActor(task, context, device);
    default:
      break;
  }
  OF_CHECK(false) << "task " << task.task_id() << " has unknown task type " << task.task_type();
  return nullptr;
}

}  // namespace oneflow
