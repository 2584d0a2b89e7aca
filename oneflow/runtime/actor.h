#pragma once
// Actor: runs one task of the Plan, driven only by messages. The register protocol:
//   - it acts when every consumed register desc has a readable register and every produced
//     register desc has a free one (and the subclass agrees, e.g. a launch is pending);
//   - after acting it sends each produced register to all its consumers and returns each
//     consumed register to its producer;
//   - a produced register is free again once all its consumers have returned it, so
//     register_num bounds how many pieces are in flight (the back-pressure window);
//   - once every input has delivered end-of-data and been drained, it sends end-of-data
//     downstream and finishes when all its registers are home.
// An op that changes time shapes (framework/time_shape.h) acts in cycles of N: after an act it
// may keep its consumed registers to read them again (KeepsInputs: repeat, unpack) or keep its
// produced registers to write them again (KeepsOutputs: acc, pack), sending nothing for them.
// An actor of N pieces per iteration that updates a register of one piece in place keeps it for
// its N acts (TaskProto.consumed_reads).
// No actor ever blocks; errors of an iteration are recorded on its job instance.

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "oneflow/framework/kernel.h"
#include "oneflow/runtime/act_event.h"
#include "oneflow/runtime/actor_message.h"
#include "oneflow/runtime/regst.h"
#include "proto/plan.pb.h"

namespace oneflow {

class Communicator;
class DeviceContext;
class PointToPoint;
class MessageBus;
class RegisterManager;
class RegisterMemoryPool;
class Stream;

// What every actor of one runtime shares. Owned by the Runtime.
struct ActorContext {
  const MessageBus* bus = nullptr;
  const WatchHandler* watch_handler = nullptr;
  const RegisterManager* registers = nullptr;
  Communicator* communicator = nullptr;  // collectives among this process's devices
  Communicator* gpu_communicator = nullptr;  // collectives among this process's GPUs (NCCL)
  // Across machines (null in a single-process runtime): collectives, and transfers of registers.
  Communicator* cross_machine_communicator = nullptr;
  PointToPoint* point_to_point = nullptr;
  // Stops the runtime (Runtime::Abort), from any thread: a failure that breaks the whole Plan,
  // such as a lost peer.
  std::function<void(std::exception_ptr error)> on_fatal_error;
  std::map<int64_t, const RegstDescProto*> regst_descs;  // every register desc of the plan
  // Actor id -> its thread, for the actors of this machine whose work their thread's device
  // stream orders (not collectives or transfers). Filled before the threads start.
  std::unordered_map<int64_t, int64_t> device_stream_thread;
  // Called by a sink actor when an iteration of job `job_id` has finished (after Finish()).
  std::function<void(int64_t job_id, JobInstance* instance)> on_iteration_finished;
  // Record an ActEvent per act (the actor timeline), timed from `start_time`.
  bool collect_act_events = false;
  std::chrono::steady_clock::time_point start_time;
};

// Instrumentation of one produced register desc (read by tests).
struct RegstStats {
  int64_t register_num = 0;
  int64_t max_in_flight = 0;  // most registers lent to consumers at once
  int64_t pieces = 0;         // registers sent
};

class Actor {
 public:
  // `device` is the context of the thread that will run the actor.
  Actor(const TaskProto& task, const ActorContext& context, DeviceContext& device);
  virtual ~Actor() = default;

  int64_t actor_id() const { return actor_id_; }
  // Handles one message and acts as long as it can. Returns true once the actor has finished.
  bool ProcessMessage(const ActorMessage& message);
  // Called once every actor of the runtime exists, before the threads start (messages sent then
  // wait in their queues): an actor fed from outside the Plan (over the data plane) starts
  // listening here.
  virtual void OnRuntimeStarted() {}
  const std::map<int64_t, RegstStats>& stats() const { return stats_; }
  const std::vector<ActEvent>& act_events() const { return act_events_; }
  // The stream of an actor whose work completes elsewhere (a collective, a transfer between
  // machines); null for one whose work the device's stream orders.
  virtual Stream* own_stream() { return nullptr; }

 protected:
  // Extra readiness condition and the work of one act. `inputs` holds the front register of
  // each consumed desc (in consumed order); `outputs` a free register of each produced desc.
  virtual bool CanAct() const { return true; }
  virtual void Act(const std::vector<Regst*>& inputs, const std::vector<Regst*>& outputs) = 0;
  // Asked after each act: whether the act's consumed registers stay for the next act (not
  // returned) and whether its produced registers stay for the next act (not sent; the next act
  // gets the same ones, memory and all).
  virtual bool KeepsInputs() const { return false; }
  virtual bool KeepsOutputs() const { return false; }
  // For sources: the piece and instance stamped on outputs when there are no inputs.
  virtual void NextPiece(int64_t* piece_id, std::shared_ptr<JobInstance>* instance) {}
  // For sources: true when no more pieces will come.
  virtual bool SourceExhausted() const { return false; }
  virtual void HandleCommand(const ActorMessage& message) {}

  const ActorContext& context() const { return context_; }
  DeviceContext& device() const { return device_; }
  // Where the actor's work is ordered: outgoing registers and end-of-data are sent once the work
  // enqueued before them is done, except to an actor of the same thread that also works on the
  // device's stream: the stream runs that actor's work after this one's anyway, so it gets its
  // messages at once and enqueues ahead of the device (as OneFlow does; on a GPU the next kernel
  // is launched before the last one ends). The device's stream, unless own_stream() names
  // another.
  Stream& stream();
  // Position of `regst_desc_id` among consumed_ids().
  int64_t ConsumedPosition(int64_t regst_desc_id) const;
  const TaskProto& task() const { return task_; }
  // Consumed register desc ids in consumed order.
  const std::vector<int64_t>& consumed_ids() const { return consumed_ids_; }

 private:
  struct ProducedSlot {
    const RegstDescProto* desc;
    std::vector<Regst*> regsts;  // owned by the RegisterManager
    std::deque<Regst*> free;
    // Where a register gets its memory while it holds a piece (RegisterManager::Pool), or null
    // when its memory is fixed; `what` names it in an out-of-memory error.
    RegisterMemoryPool* pool = nullptr;
    std::string what;
    bool kept = false;  // free.front() was kept by the last act (KeepsOutputs), memory bound
  };
  struct ConsumedSlot {
    std::deque<Regst*> ready;
    bool end_of_data = false;
    int64_t reads_per_regst = 1;  // TaskProto.consumed_reads: acts that read each register
    int64_t reads = 0;            // acts that have read ready.front()
  };

  bool ReadyToAct() const;
  void ActOnce();
  // A register of `slot` is free again: its pooled memory goes back.
  void Reclaim(ProducedSlot& slot, Regst* regst);
  bool InputsExhausted() const;
  bool AllRegstsHome() const;

  // Sends `messages` once the work enqueued on stream() so far is done (those to an actor that
  // the same device stream orders after this one: at once).
  void SendAfterStream(std::vector<ActorMessage> messages);
  // True when `actor_id` enqueues its work on this actor's stream, after this actor's.
  bool SharesDeviceStream(int64_t actor_id) const;

  TaskProto task_;
  const ActorContext& context_;
  DeviceContext& device_;
  int64_t actor_id_;
  std::deque<ProducedSlot> produced_;  // deque: slots own registers and never move
  std::vector<int64_t> consumed_ids_;
  std::map<int64_t, ConsumedSlot> consumed_;
  std::map<int64_t, RegstStats> stats_;
  std::string name_;  // for the timeline
  std::vector<ActEvent> act_events_;
  bool end_of_data_sent_ = false;
};

// "<op>@<parallel id>", "all_reduce(<blob>)@<rank>", "source_tick": how dumps and the actor
// timeline name a task.
std::string TaskName(const TaskProto& task);

// Creates the actor for `task` by its task type.
std::unique_ptr<Actor> NewActor(const TaskProto& task, const ActorContext& context,
                                DeviceContext& device);

}  // namespace oneflow
