#pragma once
// Messages between actors, and from the runtime to actors. The only way actors interact.

#include <cstdint>
#include <functional>
#include <memory>

namespace oneflow {

class JobInstance;
class Regst;

enum class ActorMessageType {
  kRegst,   // producer -> consumer: a register is readable; consumer -> producer: returned
  kEord,    // end of data on register desc `regst_desc_id`: no more pieces will come
  kLaunch,  // runtime -> source tick: start one iteration for `job_instance`
  kStop,    // runtime -> source tick: no more launches; send end of data downstream
  kCall,    // work for the thread itself (not an actor): run `call` (e.g. a collective's share)
};

struct ActorMessage {
  ActorMessageType type = ActorMessageType::kRegst;
  int64_t src_actor_id = -1;
  int64_t dst_actor_id = -1;
  Regst* regst = nullptr;
  int64_t regst_desc_id = -1;
  std::shared_ptr<JobInstance> job_instance;
  std::function<void()> call;
};

}  // namespace oneflow
