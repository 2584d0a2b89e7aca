#include "oneflow/runtime/actor.h"

#include "oneflow/comm/communicator.h"
#include "oneflow/common/error.h"
#include "oneflow/device/device_context.h"
#include "oneflow/framework/host_tensor.h"
#include "oneflow/runtime/job_instance.h"
#include "oneflow/runtime/register_manager.h"
#include "oneflow/runtime/register_memory_pool.h"
#include "oneflow/runtime/thread.h"

namespace oneflow {

namespace {

double MicrosecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

std::string TaskName(const TaskProto& task) {
  switch (task.task_type()) {
    case kSourceTick: return "source_tick";
    case kSinkTick: return "sink_tick";
    case kSend:
      return "send(channel " + std::to_string(task.channel().channel_id()) + ")->" +
             std::to_string(task.channel().peer_machine());
    case kRecv:
      return "recv(channel " + std::to_string(task.channel().channel_id()) + ")<-" +
             std::to_string(task.channel().peer_machine());
    case kCollective:
      return std::string(CollectiveKindName(task.collective().kind())) + "(" +
             task.collective().lbn() + ")@" + std::to_string(task.collective().rank());
    default: break;
  }
  if (task.exec_node_size() == 0) { return "task " + std::to_string(task.task_id()); }
  const ExecNode& exec = task.exec_node(0);
  return exec.op_conf().name() + "@" + std::to_string(exec.parallel_context().parallel_id());
}

Actor::Actor(const TaskProto& task, const ActorContext& context, DeviceContext& device)
    : task_(task), context_(context), device_(device), actor_id_(task.task_id()) {
  for (const RegstDescProto& desc : task_.produced_regst_desc()) {
    ProducedSlot& slot = produced_.emplace_back();
    slot.desc = &desc;
    slot.regsts = context.registers->Registers(desc.regst_desc_id());
    slot.free.assign(slot.regsts.begin(), slot.regsts.end());
    slot.pool = context.registers->Pool(desc.regst_desc_id());
    if (slot.pool != nullptr) {
      slot.what = "a register of task " + std::to_string(task.task_id()) + " (" +
                  TaskName(task) + ")";
    }
    RegstStats& stats = stats_[desc.regst_desc_id()];
    stats.register_num = desc.register_num();
  }
  for (int64_t id : task_.consumed_regst_desc_id()) {
    consumed_ids_.push_back(id);
    consumed_[id];
  }
  for (const auto& [id, reads] : task_.consumed_reads()) {
    consumed_.at(id).reads_per_regst = reads;
  }
  if (context.collect_act_events) { name_ = TaskName(task_); }
}

bool Actor::ProcessMessage(const ActorMessage& message) {
  switch (message.type) {
    case ActorMessageType::kRegst: {
      Regst* regst = message.regst;
      if (regst->producer_actor_id() == actor_id_) {
        OF_CHECK(regst->reading_count > 0) << "register returned more often than lent";
        if (--regst->reading_count == 0) {
          for (ProducedSlot& slot : produced_) {
            if (slot.desc->regst_desc_id() == regst->regst_desc_id()) { Reclaim(slot, regst); }
          }
        }
      } else {
        consumed_.at(regst->regst_desc_id()).ready.push_back(regst);
      }
      break;
    }
    case ActorMessageType::kEord: consumed_.at(message.regst_desc_id).end_of_data = true; break;
    default: HandleCommand(message); break;
  }
  while (ReadyToAct()) { ActOnce(); }
  if (!end_of_data_sent_ && InputsExhausted()) {
    end_of_data_sent_ = true;
    // Through the stream, like registers: end-of-data must not overtake the last register.
    std::vector<ActorMessage> eords;
    for (const ProducedSlot& slot : produced_) {
      for (int64_t consumer : slot.desc->consumer_task_id()) {
        ActorMessage eord;
        eord.type = ActorMessageType::kEord;
        eord.src_actor_id = actor_id_;
        eord.dst_actor_id = consumer;
        eord.regst_desc_id = slot.desc->regst_desc_id();
        eords.push_back(std::move(eord));
      }
    }
    SendAfterStream(std::move(eords));
  }
  return end_of_data_sent_ && AllRegstsHome();
}

bool Actor::ReadyToAct() const {
  if (end_of_data_sent_) { return false; }
  for (const auto& entry : consumed_) {
    if (entry.second.ready.empty()) { return false; }
  }
  for (const ProducedSlot& slot : produced_) {
    if (slot.free.empty()) { return false; }
  }
  return CanAct();
}

void Actor::ActOnce() {
  std::vector<Regst*> inputs;
  inputs.reserve(consumed_ids_.size());
  for (int64_t id : consumed_ids_) { inputs.push_back(consumed_.at(id).ready.front()); }
  int64_t piece_id = -1;
  std::shared_ptr<JobInstance> instance;
  if (inputs.empty()) {
    NextPiece(&piece_id, &instance);
  } else {
    piece_id = inputs.front()->piece_id();
    instance = inputs.front()->job_instance();
    for (Regst* input : inputs) {
      OF_CHECK(input->piece_id() == piece_id)
          << "actor " << actor_id_ << " got pieces " << piece_id << " and " << input->piece_id()
          << " at once";
    }
  }
  std::vector<Regst*> outputs;
  outputs.reserve(produced_.size());
  for (ProducedSlot& slot : produced_) {
    Regst* regst = slot.free.front();
    slot.free.pop_front();
    if (slot.pool != nullptr && !slot.kept) {
      regst->Bind(slot.pool->Acquire(slot.desc->byte_size(), slot.what));
    }
    slot.kept = false;
    regst->SetPiece(piece_id, instance);
    outputs.push_back(regst);
  }

  if (context_.collect_act_events) {
    ActEvent event;
    event.actor_id = actor_id_;
    event.machine_id = task_.machine_id();
    event.thread_id = task_.thread_id();
    event.piece_id = piece_id;
    event.name = name_;
    // Work on the device's stream is timed there too (a GPU's; the CPU runs it inline).
    const bool on_device_stream = own_stream() == nullptr;
    event.start_us = MicrosecondsSince(context_.start_time);
    if (on_device_stream) { event.device_begin_mark = device_.MarkTime(); }
    Act(inputs, outputs);
    if (event.device_begin_mark >= 0) { event.device_end_mark = device_.MarkTime(); }
    event.end_us = MicrosecondsSince(context_.start_time);
    act_events_.push_back(std::move(event));
  } else {
    Act(inputs, outputs);
  }

  // Messages leave through the stream, so they follow the work the act enqueued there (the CPU
  // stream runs inline; a CUDA stream will send them from its completion callback).
  std::vector<ActorMessage> messages;
  const bool keep_outputs = KeepsOutputs();
  for (size_t i = 0; i < produced_.size(); ++i) {
    if (keep_outputs) {  // the next act of the cycle writes the same register again
      produced_[i].free.push_front(outputs[i]);
      produced_[i].kept = true;
      continue;
    }
    Regst* regst = outputs[i];
    const auto& consumers = produced_[i].desc->consumer_task_id();
    regst->reading_count = consumers.size();
    RegstStats& stats = stats_[regst->regst_desc_id()];
    ++stats.pieces;
    int64_t in_flight = stats.register_num - static_cast<int64_t>(produced_[i].free.size());
    if (in_flight > stats.max_in_flight) { stats.max_in_flight = in_flight; }
    if (consumers.empty()) {
      Reclaim(produced_[i], regst);
      continue;
    }
    for (int64_t consumer : consumers) {
      ActorMessage message;
      message.src_actor_id = actor_id_;
      message.dst_actor_id = consumer;
      message.regst = regst;
      messages.push_back(std::move(message));
    }
  }
  const bool keep_inputs = KeepsInputs();  // the next act of the cycle reads them again
  for (size_t k = 0; !keep_inputs && k < consumed_ids_.size(); ++k) {
    ConsumedSlot& slot = consumed_.at(consumed_ids_[k]);
    if (++slot.reads < slot.reads_per_regst) { continue; }  // the next act reads it again
    slot.reads = 0;
    Regst* regst = slot.ready.front();
    slot.ready.pop_front();
    ActorMessage message;
    message.src_actor_id = actor_id_;
    message.dst_actor_id = regst->producer_actor_id();
    message.regst = regst;
    messages.push_back(std::move(message));
  }
  SendAfterStream(std::move(messages));
}

void Actor::Reclaim(ProducedSlot& slot, Regst* regst) {
  if (slot.pool != nullptr) {
    slot.pool->Release(regst->memory(), slot.desc->byte_size());
    regst->Bind(nullptr);
  }
  slot.free.push_back(regst);
}

Stream& Actor::stream() {
  Stream* own = own_stream();
  return own != nullptr ? *own : device_.stream();
}

int64_t Actor::ConsumedPosition(int64_t regst_desc_id) const {
  for (size_t position = 0; position < consumed_ids_.size(); ++position) {
    if (consumed_ids_[position] == regst_desc_id) { return static_cast<int64_t>(position); }
  }
  OF_CHECK(false) << "actor " << actor_id_ << " does not consume register desc " << regst_desc_id;
  return -1;
}

bool Actor::SharesDeviceStream(int64_t actor_id) const {
  const auto& threads = context_.device_stream_thread;
  auto mine = threads.find(actor_id_);
  auto theirs = threads.find(actor_id);
  return mine != threads.end() && theirs != threads.end() && mine->second == theirs->second;
}

void Actor::SendAfterStream(std::vector<ActorMessage> messages) {
  if (messages.empty()) { return; }
  const MessageBus* bus = context_.bus;
  // Per destination the order stays: each goes either always at once or always through the
  // stream.
  std::vector<ActorMessage> after_stream;
  for (ActorMessage& message : messages) {
    if (SharesDeviceStream(message.dst_actor_id)) {
      bus->Send(std::move(message));
    } else {
      after_stream.push_back(std::move(message));
    }
  }
  if (after_stream.empty()) { return; }
  stream().AddCallback([bus, messages = std::move(after_stream)]() mutable {
    for (ActorMessage& message : messages) { bus->Send(std::move(message)); }
  });
}

bool Actor::InputsExhausted() const {
  if (consumed_.empty()) { return SourceExhausted(); }
  for (const auto& entry : consumed_) {
    if (!entry.second.end_of_data || !entry.second.ready.empty()) { return false; }
  }
  return true;
}

bool Actor::AllRegstsHome() const {
  for (const ProducedSlot& slot : produced_) {
    if (slot.free.size() != slot.regsts.size()) { return false; }
  }
  return true;
}

}  // namespace oneflow
